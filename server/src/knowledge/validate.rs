//! Cross-entry checks run after every load: references name existing entries, stage ordering
//! has no cycle, enumerated strings hold one of their values.

use super::load::{Kind, Origins};
use super::suggest::did_you_mean;
use super::{Knowledge, KnowledgeError};
use std::collections::{HashMap, HashSet};

pub(crate) const SCOPES: [&str; 2] = ["kernels", "kernels+launch"];
pub(crate) const GENERATORS: [&str; 2] = ["autotune", "fixes"];
pub(crate) const APPLICABILITIES: [&str; 2] = ["safe", "unsafe"];

pub(crate) fn validate(kb: &Knowledge, origins: &Origins) -> Result<(), KnowledgeError> {
    defaults(kb, origins)?;
    devices(kb, origins)?;
    toolchains(kb, origins)?;
    rules(kb, origins)?;
    stages(kb, origins)?;
    seeds(kb)?;
    api(kb)?;
    Ok(())
}

/// Every release, toolchain and rule the API data names exists.
fn api(kb: &Knowledge) -> Result<(), KnowledgeError> {
    let toolchain = |file: &str, field: &str, id: &str| -> Result<(), KnowledgeError> {
        if kb.toolchain(id).is_none() {
            return Err(KnowledgeError::new(file, 0, field, missing("toolchain", id, kb.toolchains.iter().map(|t| &t.id))));
        }
        Ok(())
    };
    for r in &kb.api.releases {
        for t in &r.toolchains {
            toolchain("api/releases.toml", &format!("release.{}.toolchains", r.id), t)?;
        }
    }
    for m in &kb.api.modules {
        let file = format!("api/{}.toml", m.module);
        for (name, s) in &m.symbols {
            let field = |f: &str| format!("symbols.{name}.{f}");
            for r in s.releases.iter().chain(s.params.iter().flat_map(|p| p.releases.iter().flatten())) {
                if !kb.api.releases.iter().any(|x| &x.id == r) {
                    return Err(KnowledgeError::new(&file, 0, field("in"), missing("release", r, kb.api.releases.iter().map(|x| &x.id))));
                }
            }
            for t in s.deprecated.iter().chain(&s.removed) {
                toolchain(&file, &field("deprecated"), t)?;
            }
            if let Some(code) = &s.rule
                && kb.rule(code).is_none()
            {
                return Err(KnowledgeError::new(&file, 0, field("rule"), format!("no rule `{code}`")));
            }
            if let Some(fix) = &s.fix
                && (!APPLICABILITIES.contains(&fix.as_str()) || s.replacement.is_none())
            {
                return Err(KnowledgeError::new(&file, 0, field("fix"), "a fix is \"safe\" or \"unsafe\" and needs a `replacement`"));
            }
        }
    }
    Ok(())
}

/// The kinds of kernel a seed list can seed (`cover::autotune::space`).
pub(crate) const SEED_KINDS: [&str; 4] = ["gemm", "gemm-epilogue", "attention", "rowwise"];

fn seeds(kb: &Knowledge) -> Result<(), KnowledgeError> {
    for l in &kb.autotune_seeds {
        let file = format!("autotune/{}.json", l.name);
        if !SEED_KINDS.contains(&l.kind.as_str()) {
            return Err(KnowledgeError::new(file, 0, "kind", format!("`{}` is not one of {SEED_KINDS:?}", l.kind)));
        }
        if l.configs.is_empty() {
            return Err(KnowledgeError::new(file, 0, "configs", "a seed list needs at least one config"));
        }
    }
    Ok(())
}

fn err(origins: &Origins, kind: Kind, key: &str, field: &str, message: String) -> KnowledgeError {
    let (file, line) = origins.locate(kind, key, field);
    KnowledgeError::new(file, line, field, message)
}

/// "no stage named `x`; did you mean `y`?"
fn missing(what: &str, name: &str, known: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let known: Vec<String> = known.into_iter().map(|k| k.as_ref().to_string()).collect();
    match did_you_mean(name, known.iter().map(String::as_str)) {
        Some(s) => format!("no {what} named `{name}`; did you mean `{s}`?"),
        None => format!("no {what} named `{name}` (known: {})", known.join(", ")),
    }
}

fn defaults(kb: &Knowledge, origins: &Origins) -> Result<(), KnowledgeError> {
    if kb.device(&kb.default_device).is_none() {
        let (file, line) = origins.locate_default("device");
        return Err(KnowledgeError::new(file, line, "device", missing("device", &kb.default_device, kb.devices.iter().map(|d| &d.id))));
    }
    if !kb.default_cuda_device.is_empty() && kb.device(&kb.default_cuda_device).is_none() {
        let (file, line) = origins.locate_default("cuda_device");
        let message = missing("device", &kb.default_cuda_device, kb.devices.iter().map(|d| &d.id));
        return Err(KnowledgeError::new(file, line, "cuda_device", message));
    }
    if kb.toolchain(&kb.default_toolchain).is_none() {
        let (file, line) = origins.locate_default("toolchain");
        let message = missing("toolchain", &kb.default_toolchain, kb.toolchains.iter().map(|t| &t.id));
        return Err(KnowledgeError::new(file, line, "toolchain", message));
    }
    Ok(())
}

fn devices(kb: &Knowledge, origins: &Origins) -> Result<(), KnowledgeError> {
    for d in &kb.devices {
        let e = |field: &str, message: String| err(origins, Kind::Device, &d.id, field, message);
        if let Some(sizes) = d.sub_group_sizes.get()
            && (sizes.is_empty() || sizes.iter().any(|s| !s.is_power_of_two()))
        {
            return Err(e("sub_group_sizes", format!("sub-group sizes must be non-empty powers of two, got {sizes:?}")));
        }
        if let (Some(large), Some(normal)) = (d.max_work_group_size_large_grf.get(), d.max_work_group_size.get())
            && large > normal
        {
            return Err(e("max_work_group_size_large_grf", format!("{large} exceeds max_work_group_size {normal}")));
        }
    }
    Ok(())
}

fn toolchains(kb: &Knowledge, origins: &Origins) -> Result<(), KnowledgeError> {
    for t in &kb.toolchains {
        let e = |field: &str, message: String| err(origins, Kind::Toolchain, &t.id, field, message);
        if let Some(v) = t.grf_large_values.iter().find(|v| !t.grf_mode_values.contains(v)) {
            return Err(e("grf_large_values", format!("`{v}` is not one of grf_mode_values")));
        }
        if let Some(v) = t.grf_small_values.iter().find(|v| !t.grf_mode_values.contains(v)) {
            return Err(e("grf_small_values", format!("`{v}` is not one of grf_mode_values")));
        }
        if let Some((from, to)) = t.grf_renames.iter().find(|(_, to)| !t.grf_mode_values.contains(to)) {
            return Err(e("grf_renames", format!("renames `{from}` to `{to}`, which is not one of grf_mode_values")));
        }
        if let Some(opt) = &t.subgroup_option
            && !t.options.contains(opt)
        {
            return Err(e("subgroup_option", format!("`{opt}` is not listed in options")));
        }
        if let Some(opt) = t.options.iter().find(|o| t.foreign_options.contains(o)) {
            return Err(e("foreign_options", format!("`{opt}` is listed both as accepted and as foreign")));
        }
        if let Some(opt) = t.hip_options.iter().find(|o| !t.foreign_options.contains(o)) {
            return Err(e("hip_options", format!("`{opt}` is not listed in foreign_options")));
        }
        if t.dot_min_m == 0 {
            return Err(e("dot_min_m", "must be at least 1".into()));
        }
    }
    Ok(())
}

fn rules(kb: &Knowledge, origins: &Origins) -> Result<(), KnowledgeError> {
    let mut names = HashMap::new();
    for r in &kb.rules {
        let e = |field: &str, message: String| err(origins, Kind::Rule, &r.code, field, message);
        let digits = r.code.strip_prefix("XF").unwrap_or("");
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(e("code", format!("`{}` is not a rule code (XF followed by three digits)", r.code)));
        }
        if r.name.is_empty() || !r.name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
            return Err(e("name", format!("`{}` must be kebab-case", r.name)));
        }
        if let Some(other) = names.insert(r.name.as_str(), r.code.as_str()) {
            return Err(e("name", format!("`{}` is already the name of {other}", r.name)));
        }
        if let Some(stage) = &r.fix_stage
            && kb.stage(stage).is_none()
        {
            return Err(e("fix_stage", missing("stage", stage, kb.stages.iter().map(|s| &s.name))));
        }
        if let Some(fix) = &r.fix
            && !APPLICABILITIES.contains(&fix.as_str())
        {
            return Err(e("fix", format!("`{fix}` is not one of {APPLICABILITIES:?}")));
        }
        if r.summary.trim().is_empty() || r.docs.trim().is_empty() {
            return Err(e(if r.summary.trim().is_empty() { "summary" } else { "docs" }, "must not be empty".into()));
        }
    }
    Ok(())
}

fn stages(kb: &Knowledge, origins: &Origins) -> Result<(), KnowledgeError> {
    for s in &kb.stages {
        let e = |field: &str, message: String| err(origins, Kind::Stage, &s.name, field, message);
        if !SCOPES.contains(&s.scope.as_str()) {
            return Err(e("scope", format!("`{}` is not one of {SCOPES:?}", s.scope)));
        }
        if let Some(g) = &s.deterministic
            && !GENERATORS.contains(&g.as_str())
        {
            return Err(e("deterministic", format!("`{g}` is not one of {GENERATORS:?}")));
        }
        if let Some(code) = s.rules.iter().find(|c| kb.rule(c).is_none()) {
            return Err(e("rules", missing("rule", code, kb.rules.iter().map(|r| &r.code))));
        }
        for dep in &s.after {
            if dep == &s.name {
                return Err(e("after", format!("stage `{dep}` cannot run after itself")));
            }
            if kb.stage(dep).is_none() {
                return Err(e("after", missing("stage", dep, kb.stages.iter().map(|s| &s.name))));
            }
        }
    }
    if let Some(mut cycle) = find_cycle(kb) {
        // Blame a stage of the layer being loaded (an overlay's edit closed the cycle), and start
        // the printed cycle there.
        cycle.pop();
        let blamed = cycle.iter().position(|n| origins.entries.contains_key(&(Kind::Stage, n.clone()))).unwrap_or(0);
        cycle.rotate_left(blamed);
        cycle.push(cycle[0].clone());
        let message = format!("stage ordering has a cycle: {} (each runs after the next)", cycle.join(" -> "));
        return Err(err(origins, Kind::Stage, &cycle[0], "after", message));
    }
    Ok(())
}

/// A cycle in the "runs after" graph, as names from a stage back to itself.
fn find_cycle(kb: &Knowledge) -> Option<Vec<String>> {
    fn visit<'a>(kb: &'a Knowledge, name: &'a str, path: &mut Vec<&'a str>, done: &mut HashSet<&'a str>) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| *n == name) {
            let mut cycle: Vec<String> = path[start..].iter().map(|s| s.to_string()).collect();
            cycle.push(name.to_string());
            return Some(cycle);
        }
        if done.contains(name) {
            return None;
        }
        path.push(name);
        if let Some(stage) = kb.stage(name) {
            for dep in &stage.after {
                if let Some(c) = visit(kb, dep, path, done) {
                    return Some(c);
                }
            }
        }
        path.pop();
        done.insert(name);
        None
    }
    let mut done = HashSet::new();
    kb.stages.iter().find_map(|s| visit(kb, &s.name, &mut Vec::new(), &mut done))
}
