//! Grouped commits to one table within a process: units hand their
//! files to the table's [`Group`] and wait; whoever takes the table's turn
//! commits everything queued by then in one commit. Many units finishing
//! together make one commit, not a race among them on the table's next
//! version; other processes are met by the format's own conflict check.
//! The one commit queue of every format that publishes.

use crate::sink::SinkError;
use std::sync::{Arc, Mutex};

/// What a commit of a group came to, shared by every member.
pub(crate) type Shared<R> = Result<R, Arc<SinkError>>;

/// One table's queue, and its turn (see the module doc): members `T`,
/// each told the outcome `R` of the commit that took it.
#[derive(Debug)]
pub(crate) struct Group<T, R> {
    queue: Mutex<Vec<(T, tokio::sync::oneshot::Sender<Shared<R>>)>>,
    /// Held while a commit is in flight; `true` once the table is known
    /// to exist with this writer's layout.
    turn: tokio::sync::Mutex<bool>,
}

impl<T, R> Default for Group<T, R> {
    fn default() -> Group<T, R> {
        Group {
            queue: Mutex::new(Vec::new()),
            turn: tokio::sync::Mutex::new(false),
        }
    }
}

impl<T, R: Clone> Group<T, R> {
    /// The table's turn, for a commit outside the queue (it waits for the
    /// queued ones in flight). Its value: whether the table is ready.
    pub(crate) async fn turn(&self) -> tokio::sync::MutexGuard<'_, bool> {
        self.turn.lock().await
    }

    /// Queues `item`, then in the table's turn commits everything queued
    /// by then with `commit` (given whether the table is ready, and the
    /// members; it returns whether the table is ready after it, and the
    /// outcome) — unless another member's turn took `item` along. The
    /// outcome of the commit that took `item`.
    pub(crate) async fn join<F, Fut>(&self, item: T, commit: F) -> Shared<R>
    where
        F: FnOnce(bool, Vec<T>) -> Fut,
        Fut: std::future::Future<Output = (bool, Result<R, SinkError>)>,
    {
        let (done, result) = tokio::sync::oneshot::channel();
        self.queue.lock().unwrap_or_else(|e| e.into_inner()).push((item, done));
        let mut ready = self.turn.lock().await;
        let queued = std::mem::take(&mut *self.queue.lock().unwrap_or_else(|e| e.into_inner()));
        if !queued.is_empty() {
            let (items, waiting): (Vec<T>, Vec<_>) = queued.into_iter().unzip();
            let (now_ready, outcome) = commit(*ready, items).await;
            *ready = now_ready;
            let outcome = outcome.map_err(Arc::new);
            for w in waiting {
                let _ = w.send(outcome.clone());
            }
        }
        drop(ready);
        match result.await {
            Ok(r) => r,
            Err(_) => Err(Arc::new(SinkError::Write {
                path: String::new(),
                source: "the commit was dropped".into(),
            })),
        }
    }
}

/// A grouped commit's error, for each member of the group.
pub(crate) fn shared_error(e: Arc<SinkError>) -> SinkError {
    match e.as_ref() {
        SinkError::Config { uri, message, .. } => SinkError::Config {
            uri: uri.clone(),
            message: message.clone(),
            source: None,
        },
        SinkError::Write { path, source } => SinkError::Write {
            path: path.clone(),
            source: source.to_string().into(),
        },
        other => SinkError::Write {
            path: String::new(),
            source: other.to_string().into(),
        },
    }
}
