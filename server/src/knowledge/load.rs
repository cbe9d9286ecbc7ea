//! Reading knowledge files (embedded, or an overlay directory with the same layout) into typed
//! entries. Every failure becomes a `KnowledgeError` naming the file, the line and the field.

use super::{Device, Knowledge, KnowledgeError, RuleInfo, SeedList, Stage, Toolchain};
use include_dir::{Dir, include_dir};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

static EMBEDDED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/knowledge");

/// The four kinds of entry, each in its own directory and keyed by one field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Device,
    Toolchain,
    Rule,
    Stage,
}

impl Kind {
    pub(crate) const ALL: [Kind; 4] = [Kind::Device, Kind::Toolchain, Kind::Rule, Kind::Stage];

    pub(crate) fn dir(self) -> &'static str {
        match self {
            Kind::Device => "devices",
            Kind::Toolchain => "toolchains",
            Kind::Rule => "rules",
            Kind::Stage => "stages",
        }
    }

    /// The field that names the entry; it must equal the file stem.
    pub(crate) fn key_field(self) -> &'static str {
        match self {
            Kind::Device | Kind::Toolchain => "id",
            Kind::Rule => "code",
            Kind::Stage => "name",
        }
    }
}

/// One file's text and the path shown in errors.
#[derive(Debug)]
pub(crate) struct SourceFile {
    pub path: String,
    pub stem: String,
    pub text: String,
}

/// Where each entry (and the defaults) came from, so validation can point at a line.
#[derive(Debug, Default)]
pub(crate) struct Origins {
    pub entries: HashMap<(Kind, String), Rc<SourceFile>>,
    pub defaults: Option<Rc<SourceFile>>,
}

impl Origins {
    /// File and line of `field` in the entry's file (line 1 when the field is not written there).
    pub(crate) fn locate(&self, kind: Kind, key: &str, field: &str) -> (String, usize) {
        match self.entries.get(&(kind, key.to_string())) {
            Some(file) => (file.path.clone(), line_of_key(&file.text, field).unwrap_or(1)),
            None => (format!("knowledge/{}/{}.toml", kind.dir(), key), 0),
        }
    }

    pub(crate) fn locate_default(&self, field: &str) -> (String, usize) {
        match &self.defaults {
            Some(file) => (file.path.clone(), line_of_key(&file.text, field).unwrap_or(1)),
            None => ("knowledge/defaults.toml".to_string(), 0),
        }
    }
}

/// The files of one layer (the embedded base or one overlay directory).
#[derive(Debug, Default)]
pub(crate) struct Layer {
    pub defaults: Option<SourceFile>,
    pub entries: Vec<(Kind, SourceFile)>,
    /// `autotune/*.json` seed lists (not `stage.json`, the stage's own knobs).
    pub seeds: Vec<SourceFile>,
    /// `api/*.toml`: `releases.toml` and one file per module.
    pub api: Vec<SourceFile>,
}

fn is_seed_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json") && path.file_stem().is_some_and(|s| s != "stage")
}

impl Layer {
    pub(crate) fn embedded() -> Layer {
        let mut layer = Layer::default();
        if let Some(file) = EMBEDDED.get_file("defaults.toml") {
            layer.defaults = Some(SourceFile {
                path: "knowledge/defaults.toml".into(),
                stem: "defaults".into(),
                text: file.contents_utf8().unwrap_or_default().to_string(),
            });
        }
        for kind in Kind::ALL {
            layer.entries.extend(embedded_files(kind.dir(), is_toml).into_iter().map(|f| (kind, f)));
        }
        layer.seeds = embedded_files("autotune", is_seed_file);
        layer.api = embedded_files("api", is_toml);
        layer
    }

    /// Read an overlay directory. Only `defaults.toml`, `*.toml` inside the four kind directories
    /// and the seed lists in `autotune/` are read; anything else (a README, editor backups) is left alone.
    pub(crate) fn from_dir(dir: &Path) -> Result<Layer, KnowledgeError> {
        if !dir.is_dir() {
            return Err(KnowledgeError::io(
                dir,
                "not a directory (expected a knowledge overlay with devices/, toolchains/, rules/, stages/)",
            ));
        }
        let mut layer = Layer::default();
        let defaults = dir.join("defaults.toml");
        if defaults.is_file() {
            layer.defaults = Some(read_file(&defaults)?);
        }
        for kind in Kind::ALL {
            layer.entries.extend(dir_files(&dir.join(kind.dir()), is_toml)?.into_iter().map(|f| (kind, f)));
        }
        layer.seeds = dir_files(&dir.join("autotune"), is_seed_file)?;
        layer.api = dir_files(&dir.join("api"), is_toml)?;
        Ok(layer)
    }
}

fn is_toml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// The embedded files of `dir` that `keep` accepts, in path order.
fn embedded_files(dir: &str, keep: fn(&Path) -> bool) -> Vec<SourceFile> {
    let Some(dir) = EMBEDDED.get_dir(dir) else { return Vec::new() };
    let mut files: Vec<_> = dir.files().filter(|f| keep(f.path())).collect();
    files.sort_by_key(|f| f.path());
    files
        .into_iter()
        .map(|file| SourceFile {
            path: format!("knowledge/{}", file.path().display()),
            stem: file.path().file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
            text: file.contents_utf8().unwrap_or_default().to_string(),
        })
        .collect()
}

/// The files of the overlay folder `sub` that `keep` accepts, in path order; none when it is absent.
fn dir_files(sub: &Path, keep: fn(&Path) -> bool) -> Result<Vec<SourceFile>, KnowledgeError> {
    if !sub.is_dir() {
        return Ok(Vec::new());
    }
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(sub).map_err(|e| KnowledgeError::io(sub, &e.to_string()))? {
        let path = entry.map_err(|e| KnowledgeError::io(sub, &e.to_string()))?.path();
        if path.is_file() && keep(&path) {
            paths.push(path);
        }
    }
    paths.sort();
    paths.iter().map(|p| read_file(p)).collect()
}

fn read_file(path: &Path) -> Result<SourceFile, KnowledgeError> {
    let text = std::fs::read_to_string(path).map_err(|e| KnowledgeError::io(path, &e.to_string()))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(SourceFile { path: path.display().to_string(), stem, text })
}

/// `defaults.toml`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultsFile {
    device: Option<String>,
    toolchain: Option<String>,
    cuda_device: Option<String>,
    stage_order: Option<Vec<String>>,
}

/// Apply one layer on top of `kb`: entries with a known key replace that entry's top-level
/// fields; new keys add entries. Records every file in `origins`.
pub(crate) fn apply(kb: &mut Knowledge, layer: Layer, origins: &mut Origins) -> Result<(), KnowledgeError> {
    let mut stage_order = None;
    if let Some(file) = layer.defaults {
        let defaults: DefaultsFile = toml::from_str(&file.text).map_err(|e| toml_error(&file, 0, e))?;
        if let Some(device) = defaults.device {
            kb.default_device = device;
        }
        if let Some(toolchain) = defaults.toolchain {
            kb.default_toolchain = toolchain;
        }
        if let Some(device) = defaults.cuda_device {
            kb.default_cuda_device = device;
        }
        stage_order = defaults.stage_order;
        origins.defaults = Some(Rc::new(file));
    }
    for (kind, file) in layer.entries {
        let file = Rc::new(file);
        match kind {
            Kind::Device => upsert(&mut kb.devices, kind, &file, |d: &Device| &d.id)?,
            Kind::Toolchain => upsert(&mut kb.toolchains, kind, &file, |t: &Toolchain| &t.id)?,
            Kind::Rule => {
                // An overlay that sets a known rule's severity pins it (see `RuleInfo::severity_pinned`).
                let known = kb.rules.iter().any(|r| r.code == file.stem);
                let sets = toml::from_str::<toml::Table>(&file.text).is_ok_and(|t| t.contains_key("severity"));
                upsert(&mut kb.rules, kind, &file, |r: &RuleInfo| &r.code)?;
                if known
                    && sets
                    && let Some(r) = kb.rules.iter_mut().find(|r| r.code == file.stem)
                {
                    r.severity_pinned = true;
                }
            }
            Kind::Stage => upsert(&mut kb.stages, kind, &file, |s: &Stage| &s.name)?,
        }
        origins.entries.insert((kind, file.stem.clone()), file);
    }
    for file in layer.seeds {
        let mut list: SeedList = serde_json::from_str(&file.text)
            .map_err(|e| KnowledgeError::new(file.path.clone(), e.line(), "configs", format!("not a seed list: {e}")))?;
        list.name = file.stem.clone();
        match kb.autotune_seeds.iter().position(|l| l.name == list.name) {
            Some(i) => kb.autotune_seeds[i] = list,
            None => kb.autotune_seeds.push(list),
        }
    }
    kb.autotune_seeds.sort_by(|a, b| a.name.cmp(&b.name));
    for file in layer.api {
        apply_api(&mut kb.api, &file)?;
    }
    if let Some(order) = stage_order {
        for name in &order {
            if !kb.stages.iter().any(|s| &s.name == name) {
                let (file, line) = origins.locate_default("stage_order");
                return Err(KnowledgeError::new(file, line, "stage_order", format!("no stage named `{name}`")));
            }
        }
        // Stable: stages the list does not mention keep their relative order, after the listed ones.
        kb.stages.sort_by_key(|s| order.iter().position(|n| n == &s.name).unwrap_or(usize::MAX));
    }
    Ok(())
}

/// One `api/*.toml` file: `releases.toml` replaces the release list; a module file adds its
/// symbols, replacing those of the same name (an overlay corrects one symbol by writing it whole).
fn apply_api(api: &mut super::Api, file: &SourceFile) -> Result<(), KnowledgeError> {
    if file.stem == "releases" {
        let r: super::ApiReleases = toml::from_str(&file.text).map_err(|e| toml_error(file, 0, e))?;
        api.releases = r.release;
        return Ok(());
    }
    let m: super::ApiModule = toml::from_str(&file.text).map_err(|e| toml_error(file, 0, e))?;
    if m.module != file.stem {
        let line = line_of_key(&file.text, "module").unwrap_or(1);
        return Err(KnowledgeError::new(file.path.clone(), line, "module", format!("`{}` does not match the file name", m.module)));
    }
    match api.modules.iter_mut().find(|x| x.module == m.module) {
        Some(known) => known.symbols.extend(m.symbols),
        None => api.modules.push(m),
    }
    Ok(())
}

fn upsert<T, F>(entries: &mut Vec<T>, kind: Kind, file: &SourceFile, key_of: F) -> Result<(), KnowledgeError>
where
    T: Serialize + DeserializeOwned,
    F: Fn(&T) -> &String,
{
    let position = entries.iter().position(|e| key_of(e) == &file.stem);
    let entry = parse_entry(kind, file, position.map(|i| &entries[i]))?;
    match position {
        Some(i) => entries[i] = entry,
        None => entries.push(entry),
    }
    Ok(())
}

/// Parse one entry file. With a `base`, the file's top-level keys replace the base's and the
/// base supplies the rest; without one, the file must be complete. The key field may be left
/// out (the file stem names the entry) but, when written, must match the stem.
fn parse_entry<T>(kind: Kind, file: &SourceFile, base: Option<&T>) -> Result<T, KnowledgeError>
where
    T: Serialize + DeserializeOwned,
{
    let own: toml::Table = toml::from_str(&file.text).map_err(|e| toml_error(file, 0, e))?;
    let key_field = kind.key_field();
    match own.get(key_field) {
        Some(toml::Value::String(key)) if key != &file.stem => {
            return Err(KnowledgeError::new(
                file.path.clone(),
                line_of_key(&file.text, key_field).unwrap_or(1),
                key_field,
                format!("`{key}` does not match the file name `{}.toml`", file.stem),
            ));
        }
        _ => {}
    }

    // Inherited keys go *before* the file's own text: top-level `key = value` lines at the start
    // stay top-level even when the file later opens `[table]` sections.
    let mut prefix = String::new();
    if let Some(base) = base {
        let inherited = toml::Table::try_from(base)
            .map_err(|e| KnowledgeError::new(file.path.clone(), 1, key_field, format!("cannot merge with the existing entry: {e}")))?;
        for (key, value) in inherited {
            if !own.contains_key(&key) {
                prefix.push_str(&format!("{key} = {value}\n"));
            }
        }
    } else if !own.contains_key(key_field) {
        prefix.push_str(&format!("{key_field} = {}\n", toml::Value::String(file.stem.clone())));
    }
    let full = format!("{prefix}{}", file.text);
    toml::from_str(&full).map_err(|e| toml_error(file, prefix.len(), e))
}

/// Turn a toml error into a located `KnowledgeError`. `prefix_len` bytes of inherited text
/// precede the file's own text in what was parsed.
fn toml_error(file: &SourceFile, prefix_len: usize, err: toml::de::Error) -> KnowledgeError {
    let offset = err.span().map(|s| s.start.saturating_sub(prefix_len));
    let line = offset.map_or(1, |o| line_at(&file.text, o));
    let message = err.message().trim().to_string();
    let field = field_of(&err, &message).or_else(|| offset.and_then(|o| key_at(&file.text, o))).unwrap_or_default();
    KnowledgeError::new(file.path.clone(), line, field, message)
}

/// The dotted key path a toml error is about: "missing field `x`" / "unknown field `x`" name the
/// field itself; otherwise the path serde recorded while descending.
fn field_of(err: &toml::de::Error, message: &str) -> Option<String> {
    let mut bare = err.clone();
    bare.set_input(None);
    let rendered = bare.to_string();
    let path = rendered.lines().find_map(|l| l.strip_prefix("in `").and_then(|r| r.strip_suffix('`'))).map(str::to_string);
    let named = ["missing field `", "unknown field `"].iter().find_map(|p| {
        let rest = message.strip_prefix(p)?;
        rest.split('`').next().map(str::to_string)
    });
    match (path, named) {
        (Some(path), Some(named)) if !path.ends_with(&named) => Some(format!("{path}.{named}")),
        (Some(path), _) => Some(path),
        (None, named) => named,
    }
}

/// 1-based line of a byte offset.
pub(crate) fn line_at(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The key written on the line holding `offset` (`key = ...`), if any.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let line = text.lines().nth(line_at(text, offset) - 1)?;
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && !key.starts_with('#')).then(|| key.to_string())
}

/// 1-based line where top-level `key` is written (`key = ...`, `key.sub = ...` or `[key]`).
pub(crate) fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|line| {
            let line = line.trim_start();
            if let Some(rest) = line.strip_prefix('[') {
                return rest.trim_start().strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(['.', ']']));
            }
            line.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(['=', '.']))
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> SourceFile {
        SourceFile { path: "over/devices/arc-a770.toml".into(), stem: "arc-a770".into(), text: text.into() }
    }

    #[test]
    fn key_lines_are_found_in_all_spellings() {
        let text = "# c\nid = \"x\"\nslm_bytes.value = 1\n[notes_table]\nsource = 'a'\n";
        assert_eq!(line_of_key(text, "id"), Some(2));
        assert_eq!(line_of_key(text, "slm_bytes"), Some(3));
        assert_eq!(line_of_key(text, "notes_table"), Some(4));
        assert_eq!(line_of_key(text, "source"), Some(5));
        assert_eq!(line_of_key(text, "sourc"), None);
    }

    #[test]
    fn wrong_type_names_field_and_line() {
        let base = Layer::embedded();
        let mut kb = Knowledge::default();
        apply(&mut kb, base, &mut Origins::default()).expect("embedded loads");
        let a770 = kb.device("arc-a770").cloned();
        let f = file("# override\n\nslm_bytes = { value = \"lots\", source = \"guess\" }\n");
        let err = parse_entry::<Device>(Kind::Device, &f, a770.as_ref()).expect_err("string is not a byte count");
        assert_eq!(err.file, "over/devices/arc-a770.toml");
        assert_eq!(err.line, 3);
        assert!(err.field.starts_with("slm_bytes"), "field was {:?}", err.field);
    }

    #[test]
    fn missing_required_field_is_named() {
        let f = file("name = \"x\"\nvendor = \"intel\"\narch = \"dg2\"\n");
        let err = parse_entry::<Device>(Kind::Device, &f, None).expect_err("generation is required");
        assert_eq!(err.field, "generation");
    }

    #[test]
    fn unknown_field_is_named_with_its_line() {
        let f = file("name = \"x\"\nvendor = \"intel\"\narch = \"dg2\"\ngeneration = \"g\"\nslm_kib = 64\n");
        let err = parse_entry::<Device>(Kind::Device, &f, None).expect_err("typo");
        assert_eq!(err.field, "slm_kib");
        assert_eq!(err.line, 5);
    }

    #[test]
    fn syntax_error_points_at_its_line() {
        let f = file("name = \"x\"\nvendor = = \"intel\"\n");
        let err = parse_entry::<Device>(Kind::Device, &f, None).expect_err("bad toml");
        assert_eq!(err.line, 2);
        assert_eq!(err.field, "vendor");
    }

    #[test]
    fn key_must_match_file_name() {
        let f = file("id = \"arc-a750\"\n");
        let err = parse_entry::<Device>(Kind::Device, &f, None).expect_err("mismatch");
        assert_eq!((err.line, err.field.as_str()), (1, "id"));
    }
}
