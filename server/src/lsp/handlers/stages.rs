//! `xeforge/stages`: the data of a stage picker (`xeforge.pickStage` in the editors). For each kernel
//! (one named, the one at a position, or all), every stage the provider knows, the ones the analysis
//! selects first and marked `recommended`, each with the ready `xeforge.runStage` command to execute.

use serde::{Deserialize, Serialize};
use tower_lsp::lsp_types::{Command, Position, TextDocumentIdentifier, Url};

use super::super::encoding::range_from_lsp;
use super::super::engine::Computed;
use super::super::stage::{StageActionProvider, StageContext};
use super::code_actions::stage_command;
use crate::config::Settings;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StagesParams {
    pub text_document: TextDocumentIdentifier,
    /// Only this kernel.
    #[serde(default)]
    pub kernel: Option<String>,
    /// Only the kernel containing this position (else the nearest one above it).
    #[serde(default)]
    pub position: Option<Position>,
}

#[derive(Debug, Serialize)]
pub struct StagesResult {
    pub uri: Url,
    pub version: i32,
    pub kernels: Vec<KernelStages>,
}

#[derive(Debug, Serialize)]
pub struct KernelStages {
    pub name: String,
    /// 0-based line of the `def`.
    pub line: u32,
    pub stages: Vec<StageChoice>,
}

#[derive(Debug, Serialize)]
pub struct StageChoice {
    pub name: String,
    pub title: String,
    pub summary: String,
    pub recommended: bool,
    pub command: Command,
}

pub fn stages(c: &Computed, p: &StagesParams, settings: &Settings, provider: &dyn StageActionProvider) -> StagesResult {
    let uri = &p.text_document.uri;
    let ctx = StageContext { uri: uri.as_str(), path: None, text: &c.text, model: &c.model, diagnostics: &c.diagnostics, settings };
    let actions = provider.actions(&ctx);
    let catalogue = provider.catalogue(settings);
    let at = p.position.map(|pos| range_from_lsp(&c.rope, tower_lsp::lsp_types::Range::new(pos, pos), c.encoding).start);
    let wanted: Vec<usize> = match (&p.kernel, at) {
        (Some(name), _) => c.model.kernels.iter().position(|k| &k.name == name).into_iter().collect(),
        (None, Some(at)) => c
            .model
            .kernels
            .iter()
            .enumerate()
            .filter(|(_, k)| k.range.start <= at)
            .max_by_key(|(_, k)| k.range.start)
            .map(|(i, _)| i)
            .into_iter()
            .collect(),
        (None, None) => (0..c.model.kernels.len()).collect(),
    };
    let kernels = wanted
        .into_iter()
        .filter_map(|i| {
            let k = c.model.kernels.get(i)?;
            let mut stages: Vec<StageChoice> = actions
                .iter()
                .filter(|a| a.kernel == i)
                .map(|a| {
                    let info = catalogue.iter().find(|s| s.name == a.stage);
                    StageChoice {
                        name: a.stage.clone(),
                        title: a.title.clone(),
                        summary: info.map(|s| s.summary.clone()).unwrap_or_default(),
                        recommended: true,
                        command: stage_command(uri, c.version, &a.title, &a.stage, &k.name),
                    }
                })
                .collect();
            for s in &catalogue {
                if stages.iter().any(|x| x.name == s.name) {
                    continue;
                }
                let title = format!("Run stage: {}", s.name);
                stages.push(StageChoice {
                    name: s.name.clone(),
                    title: title.clone(),
                    summary: s.summary.clone(),
                    recommended: false,
                    command: stage_command(uri, c.version, &title, &s.name, &k.name),
                });
            }
            let line = c.rope.byte_to_line(k.def_range.start.min(c.rope.len_bytes())) as u32;
            Some(KernelStages { name: k.name.clone(), line, stages })
        })
        .collect();
    StagesResult { uri: uri.clone(), version: c.version, kernels }
}
