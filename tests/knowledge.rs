//! The knowledge base against its contract (docs/rules.md), overlays, target resolution, stage
//! ordering, and the `rules` / `explain` / `devices` / `stages` subcommands.

#[path = "common/lsp_client.rs"]
mod lsp_client;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use xeforge::knowledge::{Knowledge, Severity, Target, TargetKind};

/// The rule table of the contract (`docs/rules.md`): code -> (name,
/// severity letter). A missing file fails the test.
fn contract_rules() -> BTreeMap<String, (String, char)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rules = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | code | name | detects | severity | research id |
        if cells.len() < 6 || !cells[1].starts_with("XF") {
            continue;
        }
        let severity = cells[4].chars().next().unwrap_or('?');
        let previous = rules.insert(cells[1].to_string(), (cells[2].to_string(), severity));
        assert!(previous.is_none(), "docs/rules.md lists {} twice", cells[1]);
    }
    assert!(rules.len() >= 20, "parsed only {} rules from {}", rules.len(), path.display());
    rules
}

fn overlay(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, text).expect("write");
    }
    dir
}

// ---- the contract -------------------------------------------------------------------------

#[test]
fn every_contract_rule_is_in_the_knowledge_base_exactly_once() {
    let kb = Knowledge::embedded();
    let contract = contract_rules();
    for (code, (name, _)) in &contract {
        let matching: Vec<_> = kb.rules.iter().filter(|r| &r.code == code).collect();
        assert_eq!(matching.len(), 1, "{code} appears {} times", matching.len());
        assert_eq!(&matching[0].name, name, "{code} has the wrong name");
    }
    let extra: Vec<_> = kb.rules.iter().filter(|r| !contract.contains_key(&r.code)).map(|r| &r.code).collect();
    assert!(extra.is_empty(), "rules not in docs/rules.md: {extra:?}");
}

#[test]
fn default_severities_follow_the_contract() {
    let kb = Knowledge::embedded();
    for (code, (_, letter)) in contract_rules() {
        let rule = kb.rule(&code).expect("present");
        let expected = match letter {
            'E' => Severity::Error,
            'W' => Severity::Warning,
            'I' => Severity::Info,
            other => panic!("{code}: unexpected severity letter {other}"),
        };
        assert_eq!(rule.severity, expected, "{code}");
    }
}

#[test]
fn every_rule_documents_why_with_an_example_and_sources() {
    for rule in &Knowledge::embedded().rules {
        for section in ["## What it detects", "## Why", "## Example", "## Sources"] {
            assert!(rule.docs.contains(section), "{} docs lack `{section}`", rule.code);
        }
        assert!(!rule.sources.is_empty(), "{} has no sources", rule.code);
    }
}

#[test]
fn a_rules_fix_stage_lists_the_rule() {
    let kb = Knowledge::embedded();
    for rule in &kb.rules {
        if let Some(stage) = &rule.fix_stage {
            let stage = kb.stage(stage).expect("validated");
            assert!(stage.rules.contains(&rule.code), "stage {} does not list {}", stage.name, rule.code);
        }
    }
}

#[test]
fn targets_of_the_contract_exist() {
    let kb = Knowledge::embedded();
    for id in ["arc-pro-b70", "arc-pro-b60", "arc-b580", "arc-a770", "max-1550", "max-1100", "lnl-arc-140v", "h100", "h200"] {
        assert!(kb.device(id).is_some(), "device {id}");
    }
    for id in ["xpu-3.3", "xpu-3.5", "xpu-3.6", "xpu-3.7", "xpu-main", "cuda"] {
        assert!(kb.toolchain(id).is_some(), "toolchain {id}");
    }
    assert_eq!((kb.default_device.as_str(), kb.default_toolchain.as_str()), ("arc-pro-b70", "xpu-3.7"));
}

#[test]
fn unverified_values_always_name_a_source() {
    for d in &Knowledge::embedded().devices {
        let facts = [
            (&d.slm_bytes.source, d.slm_bytes.verified),
            (&d.max_work_group_size.source, d.max_work_group_size.verified),
            (&d.has_fp64.source, d.has_fp64.verified),
        ];
        for (source, _) in facts {
            assert!(!source.is_empty(), "{}: a fact without a source", d.id);
        }
    }
}

// ---- overlays -----------------------------------------------------------------------------

#[test]
fn overlay_overrides_only_the_keys_it_writes() {
    let dir =
        overlay(&[("devices/arc-pro-b70.toml", "slm_bytes = { value = 65536, verified = true, source = \"measured on our B70\" }\n")]);
    let kb = Knowledge::embedded().with_overlay(dir.path()).expect("valid overlay");
    let b70 = kb.device("arc-pro-b70").expect("still there");
    assert_eq!(b70.slm_bytes.get(), Some(&65536));
    assert!(b70.slm_bytes.verified);
    assert_eq!(b70.name, "Intel Arc Pro B70", "untouched keys are inherited");
    assert_eq!(b70.sub_group_sizes.get(), Some(&vec![16, 32]));
    assert_eq!(kb.devices.len(), Knowledge::embedded().devices.len());
}

#[test]
fn overlay_adds_new_entries_and_defaults() {
    let dir = overlay(&[
        (
            "devices/arc-b570.toml",
            "name = \"Intel Arc B570\"\nvendor = \"intel\"\narch = \"bmg\"\ngeneration = \"Xe2-HPG\"\n\
             sub_group_sizes = { value = [16, 32], source = \"gpu_info.json\" }\n",
        ),
        ("defaults.toml", "device = \"arc-b570\"\n"),
    ]);
    let kb = Knowledge::embedded().with_overlay(dir.path()).expect("valid overlay");
    let b570 = kb.device("arc-b570").expect("added");
    assert_eq!(b570.slm_bytes.get(), None, "facts left out are unknown");
    let target = Target::default_for(&kb).expect("default resolves");
    assert_eq!(target.device.id, "arc-b570");
    assert_eq!(target.toolchain.id, "xpu-3.7", "defaults not overridden are kept");
}

#[test]
fn overlay_rule_docs_show_in_explain() {
    let dir = overlay(&[("rules/XF302.toml", "docs = '''\nOur cluster forbids fp64 entirely.\n'''\n")]);
    let out = xeforge(&["explain", "XF302", "--knowledge", &dir.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("Our cluster forbids fp64 entirely."));
}

#[test]
fn malformed_overlay_names_file_line_and_field() {
    let dir = overlay(&[("toolchains/xpu-3.7.toml", "# local build\nreleased = \"ours\"\ndot_min_m = \"eight\"\n")]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("a string is not a number");
    assert!(err.file.ends_with("toolchains/xpu-3.7.toml"), "{err}");
    assert_eq!(err.line, 3, "{err}");
    assert_eq!(err.field, "dot_min_m", "{err}");
    assert!(err.to_string().contains("xpu-3.7.toml:3: dot_min_m:"), "{err}");
}

#[test]
fn new_entry_missing_a_required_field_names_it() {
    let dir = overlay(&[(
        "stages/vectorise.toml",
        "title = \"Vectorise\"\nsummary = \"s\"\ninstructions = \"i\"\nrules = []\nafter = []\ncorrectness_only = false\n",
    )]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("scope is required");
    assert_eq!(err.field, "scope", "{err}");
    assert!(err.file.ends_with("stages/vectorise.toml"), "{err}");
}

#[test]
fn misspelled_key_is_rejected_not_ignored() {
    let dir = overlay(&[("devices/arc-a770.toml", "\nslm_byte = { value = 1 }\n")]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("unknown key");
    assert_eq!((err.line, err.field.as_str()), (2, "slm_byte"), "{err}");
}

#[test]
fn dangling_fix_stage_is_reported_with_a_suggestion() {
    let dir = overlay(&[("rules/XF101.toml", "\n\nfix_stage = \"device-tunning\"\n")]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("no such stage");
    assert_eq!((err.line, err.field.as_str()), (3, "fix_stage"), "{err}");
    assert!(err.message.contains("did you mean `device-tuning`"), "{err}");
}

#[test]
fn stage_cycle_is_reported() {
    let dir = overlay(&[("stages/algorithmic.toml", "after = [\"autotune\"]\n")]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("cycle");
    assert_eq!(err.field, "after", "{err}");
    assert!(err.message.contains("cycle"), "{err}");
}

#[test]
fn toolchain_values_must_agree_with_each_other() {
    let cases = [
        ("grf_large_values = [\"huge\"]\n", "grf_large_values"),
        ("grf_renames = [[\"large\", \"1024\"]]\n", "grf_renames"),
        ("foreign_options = [\"num_warps\"]\n", "foreign_options"),
        ("hip_options = [\"grf_mode\"]\n", "hip_options"),
        ("subgroup_option = \"sub_group_size\"\n", "subgroup_option"),
    ];
    for (text, field) in cases {
        let dir = overlay(&[("toolchains/xpu-3.6.toml", text)]);
        let err = Knowledge::embedded().with_overlay(dir.path()).expect_err(text);
        assert_eq!((err.line, err.field.as_str()), (1, field), "{err}");
    }
}

#[test]
fn stage_order_in_defaults_must_name_stages() {
    let dir = overlay(&[("defaults.toml", "# reorder\nstage_order = [\"autotune\", \"autotuning\"]\n")]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("unknown stage");
    assert_eq!((err.line, err.field.as_str()), (2, "stage_order"), "{err}");
}

#[test]
fn unknown_default_device_is_reported_with_a_suggestion() {
    let dir = overlay(&[("defaults.toml", "device = \"arc-pro-b7O\"\n")]);
    let err = Knowledge::embedded().with_overlay(dir.path()).expect_err("no such device");
    assert_eq!((err.line, err.field.as_str()), (1, "device"), "{err}");
    assert!(err.message.contains("did you mean `arc-pro-b70`"), "{err}");
}

#[test]
fn missing_overlay_directory_is_an_error() {
    let err = Knowledge::embedded().with_overlay(Path::new("/nonexistent/xeforge-kb")).expect_err("no dir");
    assert!(err.to_string().starts_with("/nonexistent/xeforge-kb: "), "{err}");
}

// ---- targets ------------------------------------------------------------------------------

#[test]
fn unknown_device_suggests_the_closest_id() {
    let err = Target::resolve(Knowledge::embedded(), "b70", "").expect_err("not an id");
    assert_eq!(err.kind, TargetKind::Device);
    assert_eq!(err.suggestion.as_deref(), Some("arc-pro-b70"));
    let message = err.to_string();
    assert!(message.contains("did you mean `arc-pro-b70`?"), "{message}");
    assert!(message.contains("max-1550"), "lists the known devices: {message}");
}

#[test]
fn unknown_toolchain_suggests_the_closest_id() {
    let err = Target::resolve(Knowledge::embedded(), "", "xpu-3.8").expect_err("no 3.8");
    assert_eq!(err.kind, TargetKind::Toolchain);
    assert!(err.suggestion.is_some(), "{err}");
}

#[test]
fn ids_resolve_case_insensitively() {
    let t = Target::resolve(Knowledge::embedded(), "Max-1550", "XPU-3.3").expect("resolves");
    assert_eq!(t.label(), "max-1550 / xpu-3.3");
    assert_eq!(t.dot_min_shape(16), Some((8, 16, 16)));
}

// ---- stage order --------------------------------------------------------------------------

#[test]
fn stage_order_respects_every_after_for_every_subset() {
    let kb = Knowledge::embedded();
    let names: Vec<&str> = kb.stages.iter().map(|s| s.name.as_str()).collect();
    let mut rng = fastrand::Rng::with_seed(7);
    for round in 0..300 {
        let mut subset: Vec<&str> = names.iter().copied().filter(|_| round == 0 || rng.bool()).collect();
        rng.shuffle(&mut subset);
        let order = kb.stage_order(&subset);
        assert_eq!(order.len(), subset.len());
        for (i, later) in order.iter().enumerate() {
            for earlier in &order[i + 1..] {
                assert!(
                    !kb.must_precede(&earlier.name, &later.name),
                    "{} placed before {} in {:?}",
                    later.name,
                    earlier.name,
                    order.iter().map(|s| &s.name).collect::<Vec<_>>()
                );
            }
        }
    }
}

#[test]
fn full_stage_order_is_the_xe_forge_pipeline() {
    let kb = Knowledge::embedded();
    let all: Vec<&str> = kb.stages.iter().rev().map(|s| s.name.as_str()).collect();
    let order: Vec<&str> = kb.stage_order(&all).iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        order,
        [
            "analysis",
            "algorithmic",
            "discovery",
            "dtype",
            "fusion",
            "memory-access",
            "block-pointers",
            "persistent",
            "device-tuning",
            "autotune"
        ]
    );
}

// ---- command line -------------------------------------------------------------------------

fn xeforge(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xeforge")).args(args).output().expect("run xeforge")
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn rules_table_snapshot() {
    let out = xeforge(&["rules"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("rules_text", stdout(&out));
}

#[test]
fn rules_json_has_one_row_per_rule() {
    let out = xeforge(&["rules", "--format", "json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(rows.len(), contract_rules().len());
    assert_eq!(rows[0]["code"], "XF101");
    assert_eq!(rows[0]["severity"], "error");
}

#[test]
fn devices_table_snapshot() {
    let out = xeforge(&["devices"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!("devices_text", stdout(&out));
}

#[test]
fn devices_json_carries_sources() {
    let out = xeforge(&["devices", "--format", "json"]);
    let devices: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("json");
    let a770 = devices.iter().find(|d| d["id"] == "arc-a770").expect("a770");
    assert_eq!(a770["has_fp64"]["value"], false);
    assert!(a770["has_fp64"]["source"].as_str().is_some_and(|s| s.contains("#1084")));
}

#[test]
fn explain_accepts_code_in_any_case_and_name() {
    let by_code = stdout(&xeforge(&["explain", "xf104"]));
    let by_name = stdout(&xeforge(&["explain", "grf-mode-value"]));
    assert!(by_code.starts_with("# XF104 grf-mode-value\n"), "{by_code}");
    assert_eq!(by_code, by_name);
    assert!(by_code.contains("Unknown grf_mode"), "quotes the backend's error");
}

#[test]
fn explain_unknown_rule_exits_2_with_a_suggestion() {
    let out = xeforge(&["explain", "XF10"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown rule `XF10`; did you mean `XF1"), "{err}");
}

#[test]
fn stages_lists_every_stage_in_order() {
    let out = stdout(&xeforge(&["stages"]));
    let names: Vec<&str> = out.lines().skip(1).filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(names.first(), Some(&"analysis"));
    assert_eq!(names.last(), Some(&"autotune"));
    assert_eq!(names.len(), Knowledge::embedded().stages.len());
}

#[test]
fn stage_detail_shows_its_instructions() {
    let out = stdout(&xeforge(&["stages", "block-pointers"]));
    assert!(out.contains("after: memory-access"), "{out}");
    assert!(out.contains("tl.make_tensor_descriptor"), "{out}");
    assert_eq!(xeforge(&["stages", "blockpointers"]).status.code(), Some(2));
}

/// A device and an autotune seed list that only an overlay adds (`tests/fixtures/overlay/kb`: a
/// 256-work-item GPU and a replaced GEMM list) reach the checker (`check --device`), the editor's
/// device picker (`xeforge/devices`, `xeforge.selectDevice`) and the autotune stage's space (the
/// stage's own target and seed lists, written by `--emit-space`).
#[test]
fn a_device_and_a_seed_list_added_by_overlay_reach_checker_picker_and_autotune_stage() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/overlay");
    let kb = fixtures.join("kb").to_string_lossy().into_owned();
    let file = fixtures.join("matmul.py");
    let text = std::fs::read_to_string(&file).expect("fixture");
    let file = file.to_string_lossy().into_owned();
    // 32 warps × 16 = 512 work-items: fine on the default B70, too many for the overlay's GPU.
    let xf102 = |out: &std::process::Output| stdout(out).contains("XF102");
    let out = xeforge(&["check", &file]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(!xf102(&out));
    let out = xeforge(&["check", "--knowledge", &kb, "--device", "lab-gpu", &file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(xf102(&out) && stdout(&out).contains("256 maximum work-group size of Lab GPU"), "{}", stdout(&out));

    let mut c = lsp_client::Client::spawn();
    c.initialize(lsp_client::capabilities(&["utf-16"]), serde_json::json!({"knowledge": kb}));
    let uri = "file:///tmp/xeforge-overlay-test/matmul.py";
    c.open(uri, &text, 1);
    assert!(c.diagnostics_for_version(uri, 1).iter().all(|d| d["code"] != "XF102"));
    let devices = c.request("xeforge/devices", serde_json::json!({}));
    let lab = devices["devices"].as_array().expect("devices").iter().find(|d| d["id"] == "lab-gpu").cloned();
    assert!(lab.is_some(), "{devices}");
    let r = c.request("workspace/executeCommand", serde_json::json!({"command": "xeforge.selectDevice", "arguments": ["lab-gpu"]}));
    assert_eq!(r["device"], "lab-gpu", "{r}");
    c.diagnostics_where(uri, |p| p["diagnostics"].as_array().is_some_and(|d| d.iter().any(|d| d["code"] == "XF102")));
    assert_eq!(c.shutdown_and_exit(), Some(0));

    // The overlay's two lists (gemm, gemm_epilogue) replace the shipped ones: the start, then their
    // configs in list order, less the 32-warp one the overlay's GPU cannot hold.
    let space = tempfile::tempdir().expect("tempdir");
    let dir = space.path().to_string_lossy().into_owned();
    let out = xeforge(&["stage", "autotune", &file, "--knowledge", &kb, "--target", "lab-gpu", "--emit-space", &dir]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(space.path().join("index.json")).expect("index")).expect("json");
    let configs: Vec<&str> = index.as_array().expect("list").iter().filter_map(|c| c["config"].as_str()).collect();
    assert_eq!(
        configs,
        [
            "BLOCK_M=64 BLOCK_N=32 BLOCK_K=32 GROUP_M=4 w32 s2",
            "BLOCK_M=64 BLOCK_N=128 BLOCK_K=64 GROUP_M=2 w16 s3",
            "BLOCK_M=32 BLOCK_N=64 BLOCK_K=32 GROUP_M=4 w8 s2",
        ]
    );
}

#[test]
fn broken_overlay_fails_the_command_with_exit_2() {
    let dir = overlay(&[("devices/h100.toml", "arch = 90\n")]);
    let out = xeforge(&["devices", "--knowledge", &dir.path().to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("h100.toml:1: arch:"), "{err}");
}

/// A rule's severity written in an overlay is the severity of every finding of that rule (the
/// per-target choice in code yields to it); an overlay that leaves severity alone changes nothing.
#[test]
fn a_severity_set_in_an_overlay_changes_the_diagnostic() {
    let text =
        "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x):\n    pass\n\n\ndef run(x):\n    k[(1,)](x, num_warps=6)\n";
    let opts = xeforge::lint::LintOptions::default();
    let severity_of = |kb: &Knowledge| {
        let a = xeforge::analysis::analyze(text, kb, &opts).expect("analysis");
        a.diagnostics.iter().find(|d| d.code == "XF101").map(|d| d.severity).expect("an XF101 finding")
    };
    assert_eq!(severity_of(Knowledge::embedded()), Severity::Error);
    let pinned = overlay(&[("rules/XF101.toml", "severity = \"info\"\n")]);
    let kb = Knowledge::embedded().with_overlay(pinned.path()).expect("overlay");
    assert_eq!(severity_of(&kb), Severity::Info);
    let untouched = overlay(&[("rules/XF101.toml", "summary = \"warps as a power of two\"\n")]);
    let kb = Knowledge::embedded().with_overlay(untouched.path()).expect("overlay");
    assert_eq!(severity_of(&kb), Severity::Error);
}

/// Stage fields the code acts on are typed and come from the knowledge base: fusion may merge
/// kernels because its file says so, not because its name contains "fusion".
#[test]
fn stage_fields_are_typed_and_fusion_is_a_field() {
    use xeforge::knowledge::{EditScope, Generator};
    let kb = Knowledge::embedded();
    let fusion = kb.stage("fusion").expect("fusion");
    assert!(fusion.allow_fusion);
    assert_eq!(fusion.edit_scope(), EditScope::KernelsAndLaunch);
    assert_eq!(kb.stage("autotune").expect("autotune").generator(), Some(Generator::Autotune));
    assert!(kb.stages.iter().filter(|s| s.name != "fusion").all(|s| !s.allow_fusion));
    let renamed = overlay(&[("stages/fusion.toml", "allow_fusion = false\n")]);
    let kb = Knowledge::embedded().with_overlay(renamed.path()).expect("overlay");
    assert!(!kb.stage("fusion").expect("fusion").allow_fusion);
}

/// Autotune seed lists load through the knowledge loader: an overlay's list of the same name replaces
/// the embedded one, a new name adds one, and the autotune space of that kind of kernel starts from it.
#[test]
fn autotune_seed_lists_are_overlaid_and_reach_the_space() {
    use xeforge::cover::autotune::space::{self, ConfigValue, KernelKind, TuneConfig, TuneInput, TuneTarget};
    let embedded = Knowledge::embedded();
    let names: Vec<&str> = embedded.autotune_seeds.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["attention_fwd", "gemm", "gemm_cuda", "gemm_epilogue", "softmax"]);
    let mine = r#"{"kind": "gemm", "source": "my own sweep", "configs": [
        {"kwargs": {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64}, "num_warps": 16, "num_stages": 3}]}"#;
    let dir = overlay(&[("autotune/gemm.json", mine), ("autotune/gemm_epilogue.json", mine)]);
    let kb = Knowledge::embedded().with_overlay(dir.path()).expect("overlay");
    assert_eq!(kb.autotune_seeds.len(), 5);
    assert_eq!(kb.autotune_seeds.iter().find(|l| l.name == "gemm").expect("gemm").configs.len(), 1);

    let start = TuneConfig {
        kwargs: vec![
            ("BLOCK_M".into(), ConfigValue::Int(32)),
            ("BLOCK_N".into(), ConfigValue::Int(32)),
            ("BLOCK_K".into(), ConfigValue::Int(32)),
        ],
        num_warps: 4,
        num_stages: 2,
    };
    let input = TuneInput {
        kind: KernelKind::Gemm,
        blocks: vec![("BLOCK_M".into(), 32), ("BLOCK_N".into(), 32), ("BLOCK_K".into(), 32)],
        start,
        elem_bytes: 2,
    };
    let mut target = TuneTarget::xpu_default();
    target.seeds = kb.autotune_seeds.clone();
    let s = space::build(&input, &target, 64);
    assert_eq!(s.len(), 2, "the start and the overlay's one config: {s:?}");
    assert_eq!(s[1].label(), "BLOCK_M=64 BLOCK_N=128 BLOCK_K=64 w16 s3");

    let bad = overlay(&[("autotune/mine.json", r#"{"kind": "conv", "source": "x", "configs": []}"#)]);
    let err = Knowledge::embedded().with_overlay(bad.path()).expect_err("unknown kind");
    assert_eq!(err.field, "kind", "{err}");
}
