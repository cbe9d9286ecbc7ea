//! `$/progress` of a long job the server runs for a command (`xeforge.runStage`,
//! `xeforge.verifyCompiled`): a token created with the client when it takes progress, then begin,
//! reports and end. A client without progress gets nothing here; the job's outcome still reaches it
//! as a message.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp::lsp_types::notification::Progress;
use tower_lsp::lsp_types::request::WorkDoneProgressCreate;
use tower_lsp::lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin, WorkDoneProgressCreateParams,
    WorkDoneProgressEnd, WorkDoneProgressReport,
};

use super::session::Session;
use super::transport::{client_request, spawn_notification};

#[derive(Clone)]
pub struct WorkProgress {
    session: Arc<Session>,
    token: NumberOrString,
    on: bool,
}

impl WorkProgress {
    /// Create `token` with the client and begin, cancellable (the job is registered in `session.jobs`
    /// under the same token, for `window/workDoneProgress/cancel`).
    pub async fn begin(session: &Arc<Session>, token: &str, title: String) -> WorkProgress {
        let token = NumberOrString::String(token.to_string());
        let on = session.caps().work_done_progress
            && match session.client() {
                Some(c) => client_request::<WorkDoneProgressCreate>(
                    c,
                    WorkDoneProgressCreateParams { token: token.clone() },
                    Duration::from_secs(10),
                )
                .await
                .is_ok(),
                None => false,
            };
        let p = WorkProgress { session: session.clone(), token, on };
        p.send(WorkDoneProgress::Begin(WorkDoneProgressBegin { title, cancellable: Some(true), message: None, percentage: Some(0) }));
        p
    }

    pub fn report(&self, message: String, percentage: Option<u32>) {
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport { cancellable: Some(true), message: Some(message), percentage }));
    }

    pub fn end(&self, message: String) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd { message: Some(message) }));
    }

    fn send(&self, value: WorkDoneProgress) {
        if self.on
            && let Some(c) = self.session.client()
        {
            spawn_notification::<Progress>(c, ProgressParams { token: self.token.clone(), value: ProgressParamsValue::WorkDone(value) });
        }
    }
}

/// A token no other job of this process has.
pub fn token(kind: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(1);
    format!("xeforge-{kind}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}
