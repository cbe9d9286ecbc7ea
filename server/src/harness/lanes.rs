//! The client's side of the harness's pool: how many jobs it runs at once, and a permit per lane.
//!
//! The harness queues a request that finds every lane of its device busy, and the client's timeout
//! for it runs all the while: a stage that sent more requests than there are lanes would see the last
//! ones time out while they waited. So a job's request is sent only with a permit of its device's
//! lanes; the count is `ping`'s `pool` (read once), one when the harness does not say (an older one,
//! a test's scripted one): one job at a time, exactly as before the pool existed.

use super::HarnessError;
use super::protocol::{DeviceKind, PoolInfo};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};

#[derive(Default)]
pub struct Lanes {
    info: OnceCell<PoolInfo>,
    /// One semaphore per device kind (the kind `auto` resolves to shares its kind's).
    permits: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Lanes {
    /// The pool as `ping` reported it, asked once; a failed ping is not kept (the next job asks again)
    /// and counts as one lane: the job's own request then says what is wrong.
    pub async fn info<F, Fut>(&self, ping: F) -> PoolInfo
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<serde_json::Value, HarnessError>>,
    {
        let got = self.info.get_or_try_init(|| async { ping().await.map(|v| PoolInfo::from_ping(&v)) }).await;
        match got {
            Ok(info) => info.clone(),
            Err(e) => {
                tracing::debug!("harness ping for the pool's size failed ({e}); one job at a time");
                PoolInfo::default()
            }
        }
    }

    /// Wait for a free lane of `device`; the permit is its lane until dropped. `None` only if the
    /// semaphore was closed, which nothing does.
    pub async fn acquire(&self, pool: &PoolInfo, device: DeviceKind) -> Option<OwnedSemaphorePermit> {
        let (kind, count) = pool.lanes(device);
        let semaphore = {
            let mut map = self.permits.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(kind).or_insert_with(|| Arc::new(Semaphore::new(count))).clone()
        };
        semaphore.acquire_owned().await.ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn jobs_beyond_the_lanes_wait_for_a_permit() {
        let lanes = Lanes::default();
        let pool = PoolInfo::from_ping(&serde_json::json!({"pool": {"kind": "cpu", "size": 2, "kinds": {"cpu": 2}}}));
        let a = lanes.acquire(&pool, DeviceKind::Cpu).await;
        let b = lanes.acquire(&pool, DeviceKind::Auto).await; // `auto` is the cpu here: the same lanes
        assert!(a.is_some() && b.is_some());
        let third = tokio::time::timeout(Duration::from_millis(100), lanes.acquire(&pool, DeviceKind::Cpu)).await;
        assert!(third.is_err(), "a third job waits while two lanes are busy");
        drop(a);
        assert!(tokio::time::timeout(Duration::from_secs(1), lanes.acquire(&pool, DeviceKind::Cpu)).await.is_ok_and(|p| p.is_some()));
    }

    #[tokio::test]
    async fn a_failed_ping_counts_one_lane_and_is_asked_again() {
        let lanes = Lanes::default();
        let first = lanes.info(|| async { Err(HarnessError::Died("gone".into())) }).await;
        assert_eq!(first.lanes(DeviceKind::Cuda).1, 1);
        let second =
            lanes.info(|| async { Ok(serde_json::json!({"pool": {"kind": "cuda", "size": 4, "kinds": {"cuda": 4, "cpu": 1}}})) }).await;
        assert_eq!(second.lanes(DeviceKind::Auto), ("cuda".to_string(), 4));
        assert_eq!(second.lanes(DeviceKind::Cpu), ("cpu".to_string(), 1));
    }
}
