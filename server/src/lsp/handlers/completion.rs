//! Completion: `tl.`/`triton.` members with the target toolchain's availability, keyword arguments
//! of the call under the cursor (a `tl.*` function, `triton.Config`, a kernel launch `k[grid](...)`)
//! and their valid values (`grf_mode`, the sub-group option, `num_warps`), `triton.Config` dict keys
//! (the kernel's constexpr names), and device/toolchain ids in `[tool.xeforge]`. Items are light;
//! `completionItem/resolve` adds the documentation from `knowledge/api`.

use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{
    CompletionItem, CompletionItemKind, CompletionItemTag, CompletionList, CompletionResponse, Documentation, MarkupContent, MarkupKind,
    Position,
};

use super::super::encoding::position_to_byte;
use super::super::engine::Computed;
use super::cursor::{self, Cursor};
use super::target;
use crate::knowledge::{ApiStatus, ApiSymbol, Knowledge, Target};
use crate::model::{Kernel, Param};

/// What `completionItem/resolve` needs to find the item's documentation again.
#[derive(Debug, Serialize, Deserialize)]
pub struct ItemData {
    pub module: String,
    pub name: String,
    pub toolchain: String,
    /// The document, whose knowledge base (overlays included) has the text.
    #[serde(default)]
    pub uri: Option<tower_lsp::lsp_types::Url>,
}

pub fn completion(c: &Computed, pos: Position) -> Option<CompletionResponse> {
    let at = position_to_byte(&c.rope, pos, c.encoding);
    if c.uri.path().ends_with(".toml") {
        return settings_ids(c, at).map(list);
    }
    let t = target::target(c)?;
    let cur = cursor::at(&c.text, at);
    let items = if let Some((object, _)) = cur.member.filter(|_| cur.string.is_none()) {
        members(c, &t, object)
    } else if let Some(d) = &cur.dict {
        dict_items(c, &t, &cur, d, at)
    } else if let Some(call) = &cur.call {
        match call.keyword {
            Some(kw) => values(&t, kw, cur.string.is_some()),
            None if cur.string.is_none() => keywords(c, &t, call, at),
            None => Vec::new(),
        }
    } else {
        Vec::new()
    };
    (!items.is_empty()).then(|| list(items))
}

fn list(items: Vec<CompletionItem>) -> CompletionResponse {
    CompletionResponse::List(CompletionList { is_incomplete: false, items })
}

/// The canonical name of a dotted chain through the file's imports: `tl.load`, `triton.Config`.
pub fn canonical(c: &Computed, chain: &str) -> Option<String> {
    let (head, rest) = chain.split_once('.').map_or((chain, None), |(h, r)| (h, Some(r)));
    let imports = &c.model.imports;
    let join = |base: &str| rest.map_or(base.to_string(), |r| format!("{base}.{r}"));
    if imports.language.iter().any(|n| n == head) || (head == "tl" && imports.language.is_empty()) {
        return Some(join("tl"));
    }
    if imports.triton.iter().any(|n| n == head) || (head == "triton" && imports.triton.is_empty()) {
        return Some(match rest {
            Some(r) if r == "language" || r.starts_with("language.") => format!("tl{}", &r["language".len()..]),
            _ => join("triton"),
        });
    }
    imports.names.iter().find(|(local, _)| local == head).map(|(_, canon)| join(canon))
}

fn module_of(canon: &str) -> Option<&'static str> {
    match canon {
        "tl" => Some("triton.language"),
        "triton" => Some("triton"),
        "tl.extra.intel" => Some("triton.language.extra.intel"),
        _ => None,
    }
}

fn members(c: &Computed, t: &Target<'_>, object: &str) -> Vec<CompletionItem> {
    let Some(module) = canonical(c, object).as_deref().and_then(module_of) else { return Vec::new() };
    let Some(m) = c.kb.api.module(module) else { return Vec::new() };
    let tc = &t.toolchain.id;
    m.symbols
        .iter()
        .filter_map(|(name, sym)| {
            let status = c.kb.api.status(sym, tc);
            if status == ApiStatus::Absent {
                return None;
            }
            let kind = match sym.kind.as_str() {
                "function" => CompletionItemKind::FUNCTION,
                "class" => CompletionItemKind::CLASS,
                "module" => CompletionItemKind::MODULE,
                "dtype" => CompletionItemKind::CONSTANT,
                _ => CompletionItemKind::VARIABLE,
            };
            let mut item = item(name, kind, detail(&c.kb, sym, name, tc, status));
            // Private names last, deprecated ones just before them.
            let rank = match (name.starts_with('_'), matches!(status, ApiStatus::Deprecated | ApiStatus::Removed)) {
                (true, _) => 3,
                (false, true) => 2,
                _ => 1,
            };
            item.sort_text = Some(format!("{rank}{name}"));
            deprecate(&mut item, status);
            item.data = serde_json::to_value(ItemData {
                module: module.into(),
                name: name.clone(),
                toolchain: tc.clone(),
                uri: Some(c.uri.clone()),
            })
            .ok();
            Some(item)
        })
        .collect()
}

fn detail(kb: &Knowledge, sym: &ApiSymbol, name: &str, tc: &str, status: ApiStatus) -> String {
    let head =
        if sym.kind == "function" || sym.kind == "class" { sym.signature(name, &kb.api.params_on(sym, tc)) } else { sym.kind.clone() };
    match status {
        ApiStatus::Deprecated => format!("{head} — deprecated on {tc}"),
        ApiStatus::Removed => format!("{head} — removed on {tc}"),
        _ => head,
    }
}

fn item(label: &str, kind: CompletionItemKind, detail: String) -> CompletionItem {
    CompletionItem { label: label.to_string(), kind: Some(kind), detail: Some(detail), ..CompletionItem::default() }
}

fn deprecate(item: &mut CompletionItem, status: ApiStatus) {
    if matches!(status, ApiStatus::Deprecated | ApiStatus::Removed) {
        item.tags = Some(vec![CompletionItemTag::DEPRECATED]);
    }
}

/// Keyword names for the call under the cursor, those not given yet.
fn keywords(c: &Computed, t: &Target<'_>, call: &cursor::Call<'_>, at: usize) -> Vec<CompletionItem> {
    let tc = t.toolchain;
    let mut out = Vec::new();
    let mut push = |name: &str, detail: String, deprecated: bool| {
        if call.keywords.contains(&name) {
            return;
        }
        let mut it = item(&format!("{name}="), CompletionItemKind::PROPERTY, detail);
        it.insert_text = Some(format!("{name}="));
        it.filter_text = Some(name.to_string());
        it.sort_text = Some(format!("{}{name}", if deprecated { 2 } else { 1 }));
        if deprecated {
            it.tags = Some(vec![CompletionItemTag::DEPRECATED]);
        }
        out.push(it);
    };
    if call.launch {
        let Some(k) = kernel_named(c, call.callee) else { return Vec::new() };
        let tuned = tuned_names(k);
        for p in k.params.iter().skip(call.positional) {
            if !tuned.contains(&p.name.as_str()) {
                push(&p.name, param_detail(k, p), false);
            }
        }
        for opt in launch_options(t) {
            if !tuned.contains(&opt.as_str()) {
                push(&opt, format!("launch option ({})", tc.id), false);
            }
        }
        if let Some(wrong) = &tc.subgroup_option_wrong {
            push(wrong, format!("rejected by {} (use {})", tc.id, tc.subgroup_option.as_deref().unwrap_or("-")), true);
        }
        return out;
    }
    let Some(canon) = canonical(c, call.callee) else { return Vec::new() };
    let Some((_, name, sym)) = c.kb.api.lookup(&canon) else { return Vec::new() };
    let params = c.kb.api.params_on(sym, &tc.id);
    for p in params.iter().skip(call.positional) {
        if matches!(p.kind.as_str(), "args" | "kwargs" | "positional") {
            continue;
        }
        // A `triton.Config` keyword CUDA-only options the toolchain rejects are left out.
        if canon == "triton.Config" && tc.foreign_options.contains(&p.name) {
            continue;
        }
        let d = p.default.as_deref().map(|d| format!("{}={d}", p.name)).unwrap_or_else(|| p.name.clone());
        push(&p.name, format!("{name}({d})"), p.doc.as_deref().is_some_and(|d| d.starts_with("deprecated")));
    }
    let _ = at;
    out
}

/// The names a kernel's autotune configs or heuristics set: a launch must not pass them (XF109).
fn tuned_names(k: &Kernel) -> Vec<&str> {
    let mut v: Vec<&str> =
        k.autotune.iter().flat_map(|a| &a.configs).flat_map(|cfg| cfg.kwargs.iter().chain(&cfg.options)).map(|b| b.name.as_str()).collect();
    v.extend(k.heuristics.iter().flat_map(|h| h.names.iter().map(String::as_str)));
    if k.autotune.is_some() {
        // A config always sets these, given or not.
        v.extend(["num_warps", "num_stages", "num_ctas"]);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// The launch options worth offering on this toolchain: the common ones it accepts.
fn launch_options(t: &Target<'_>) -> Vec<String> {
    let tc = t.toolchain;
    let mut v: Vec<String> = ["num_warps", "num_stages", "num_ctas"].iter().map(|s| s.to_string()).collect();
    if !tc.grf_mode_values.is_empty() {
        v.push("grf_mode".into());
    }
    if let Some(sg) = &tc.subgroup_option {
        v.push(sg.clone());
    }
    if tc.options.iter().any(|o| o == "maxnreg") {
        v.push("maxnreg".into());
    }
    v.retain(|o| tc.options.contains(o));
    v
}

pub fn param_detail(k: &Kernel, p: &Param) -> String {
    let tuned = tuned_names(k);
    match (p.is_constexpr, tuned.contains(&p.name.as_str())) {
        (_, true) => format!("{}: set by autotune", p.name),
        (true, false) => format!("{}: tl.constexpr", p.name),
        _ => p.name.clone(),
    }
}

pub fn kernel_named<'a>(c: &'a Computed, name: &str) -> Option<&'a Kernel> {
    let short = name.rsplit('.').next().unwrap_or(name);
    c.model.kernels.iter().map(|k| &**k).find(|k| k.name == short)
}

/// Values of a backend option: `grf_mode`, the sub-group size, `num_warps`, `num_stages`.
fn values(t: &Target<'_>, option: &str, in_string: bool) -> Vec<CompletionItem> {
    let tc = t.toolchain;
    let quote = |v: &str| if in_string { v.to_string() } else { format!("\"{v}\"") };
    let (vals, why): (Vec<String>, String) = match option {
        "grf_mode" => (tc.grf_mode_values.iter().map(|v| quote(v)).collect(), format!("grf_mode on {}", tc.id)),
        o if Some(o) == tc.subgroup_option.as_deref() || Some(o) == tc.subgroup_option_wrong.as_deref() => {
            let sizes = t.device.sub_group_sizes.get().cloned().unwrap_or_default();
            (sizes.iter().map(u32::to_string).collect(), format!("sub-group sizes of {}", t.device.name))
        }
        "num_warps" if !in_string => {
            let max = t.device.max_num_sub_groups.get().copied().unwrap_or(32).max(1);
            ((0..7).map(|i| 1u32 << i).filter(|w| *w <= max).map(|w| w.to_string()).collect(), "power of two".into())
        }
        "num_stages" if !in_string => ((1..=5).map(|s| s.to_string()).collect(), "pipelining depth".into()),
        _ => return Vec::new(),
    };
    vals.iter()
        .enumerate()
        .map(|(i, v)| {
            let mut it = item(v, CompletionItemKind::VALUE, why.clone());
            it.sort_text = Some(format!("{i:02}"));
            it
        })
        .collect()
}

/// Inside the first argument of `triton.Config({...})`: the kernel's constexpr names and the
/// backend options a kwargs dict carries; after `"grf_mode":`, its values.
fn dict_items(c: &Computed, t: &Target<'_>, cur: &Cursor<'_>, d: &cursor::Dict<'_>, at: usize) -> Vec<CompletionItem> {
    let is_config = cur.call.as_ref().and_then(|call| canonical(c, call.callee)).is_some_and(|n| n == "triton.Config");
    if !is_config || !d.first_arg {
        return Vec::new();
    }
    if let Some(key) = d.value_of {
        return values(t, key, cur.string.is_some());
    }
    let Some(k) = config_kernel(c, at) else { return Vec::new() };
    let mut names: Vec<(String, String)> =
        k.params.iter().filter(|p| p.is_constexpr).map(|p| (p.name.clone(), format!("{}: tl.constexpr of {}", p.name, k.name))).collect();
    let tc = t.toolchain;
    if !tc.grf_mode_values.is_empty() {
        names.push(("grf_mode".into(), format!("backend option ({})", tc.id)));
    }
    if let Some(sg) = &tc.subgroup_option {
        names.push((sg.clone(), format!("backend option ({})", tc.id)));
    }
    names
        .into_iter()
        .filter(|(n, _)| !d.keys.contains(&n.as_str()))
        .map(|(n, detail)| {
            let mut it = item(&n, CompletionItemKind::FIELD, detail);
            if cur.string.is_none() {
                it.insert_text = Some(format!("\"{n}\": "));
            }
            it
        })
        .collect()
}

/// The kernel a `triton.Config` at `at` belongs to: the one whose autotune decorator holds it, else
/// the first kernel defined after it (a config list written above the kernel).
fn config_kernel(c: &Computed, at: usize) -> Option<&Kernel> {
    let ks = || c.model.kernels.iter().map(|k| &**k);
    ks().find(|k| k.autotune.as_ref().is_some_and(|a| a.range.start <= at && at <= a.range.end))
        .or_else(|| ks().filter(|k| k.range.start >= at).min_by_key(|k| k.range.start))
        .or_else(|| ks().rfind(|k| k.range.start <= at && at <= k.range.end))
}

/// `device = "` / `toolchain = "` in a `[tool.xeforge]` table (pyproject.toml) or xeforge.toml.
fn settings_ids(c: &Computed, at: usize) -> Option<Vec<CompletionItem>> {
    let text = &c.text[..at.min(c.text.len())];
    let line = &text[text.rfind('\n').map_or(0, |n| n + 1)..];
    let table = text.lines().rev().find(|l| l.trim_start().starts_with('[')).map(str::trim);
    let ours = c.uri.path().ends_with("xeforge.toml") || table.is_some_and(|t| t == "[tool.xeforge]");
    if !ours {
        return None;
    }
    let (key, rest) = line.split_once('=')?;
    if rest.matches('"').count() != 1 {
        return None;
    }
    let kb = &c.kb;
    let items: Vec<CompletionItem> = match key.trim() {
        "device" => kb.devices.iter().map(|d| item(&d.id, CompletionItemKind::ENUM_MEMBER, d.name.clone())).collect(),
        "toolchain" => kb.toolchains.iter().map(|t| item(&t.id, CompletionItemKind::ENUM_MEMBER, t.name.clone())).collect(),
        _ => return None,
    };
    Some(items)
}

/// `completionItem/resolve`: the symbol's documentation on the item's toolchain.
pub fn data(item: &CompletionItem) -> Option<ItemData> {
    item.data.clone().and_then(|d| serde_json::from_value::<ItemData>(d).ok())
}

pub fn resolve(kb: &Knowledge, mut item: CompletionItem) -> CompletionItem {
    let Some(data) = data(&item) else { return item };
    let Some(m) = kb.api.module(&data.module) else { return item };
    let Some(sym) = m.symbols.get(&data.name) else { return item };
    item.documentation = Some(Documentation::MarkupContent(MarkupContent {
        kind: MarkupKind::Markdown,
        value: docs(kb, &m.alias, &data.name, sym, &data.toolchain),
    }));
    item
}

/// Markdown for a symbol: signature, summary, parameters, where it exists, deprecation, sources.
pub fn docs(kb: &Knowledge, alias: &str, name: &str, sym: &ApiSymbol, tc: &str) -> String {
    let params = kb.api.params_on(sym, tc);
    let mut md = String::new();
    if sym.kind == "function" || sym.kind == "class" {
        md.push_str(&format!("```python\n{alias}.{}\n```\n\n", sym.signature(name, &params)));
    }
    if !sym.summary.is_empty() {
        md.push_str(&format!("{}\n\n", sym.summary));
    }
    for p in params.iter().filter(|p| p.doc.is_some()) {
        md.push_str(&format!("- `{}`: {}\n", p.name, p.doc.as_deref().unwrap_or_default()));
    }
    let ids: Vec<&str> = kb.toolchains.iter().map(|t| t.id.as_str()).collect();
    let with = kb.api.toolchains_with(sym, ids.iter().copied());
    let without: Vec<&str> = ids.iter().copied().filter(|t| !with.contains(t) && kb.api.release_for(t).is_some()).collect();
    md.push_str(&format!("\nAvailable on: {}", if with.is_empty() { "none".into() } else { with.join(", ") }));
    if !without.is_empty() {
        md.push_str(&format!("; not on: {}", without.join(", ")));
    }
    md.push('\n');
    let gone = match kb.api.status(sym, tc) {
        ApiStatus::Deprecated => Some(format!("**Deprecated on {tc}**")),
        ApiStatus::Removed => Some(format!("**Removed on {tc}**: calling it fails")),
        ApiStatus::Absent => Some(format!("**Not in {tc}**")),
        _ => None,
    };
    if let Some(gone) = gone {
        md.push_str(&format!("\n{gone}"));
        if let Some(r) = &sym.replacement {
            md.push_str(&format!("; use `{alias}.{r}`"));
        }
        if let Some(n) = &sym.note {
            md.push_str(&format!(" ({n})"));
        }
        md.push('\n');
    }
    if !sym.sources.is_empty() {
        md.push_str("\nSources:\n");
        for s in &sym.sources {
            md.push_str(&format!("- {s}\n"));
        }
    }
    md.trim_end().to_string()
}
