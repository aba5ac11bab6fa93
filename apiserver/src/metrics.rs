//! `/metrics` in the Prometheus text format, with kube-apiserver's metric names where
//! one exists: requests by verb, resource and code with latency histograms, open
//! long-running requests (watches), and storage operation latency (measured by
//! [`InstrumentedStorage`], a `Storage` decorator, so no backend knows about metrics).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use kapi_storage::{
    Cacher, Deleted, KeyValue, ListRequest, ListResponse, ReadAt, Result, Revision, Storage,
    WatchCacheBudget, WatchStream,
};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of a served request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `DELETE`, `DELETECOLLECTION`.
    pub verb: String,
    /// API group (empty for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource, or empty for non-resource paths.
    pub resource: String,
    /// Subresource, or empty.
    pub subresource: String,
    /// HTTP status code.
    pub code: String,
}

impl RequestLabels {
    /// The labels of a request answered with `code`: kube-apiserver's verbs (`LIST`,
    /// `WATCH`, ...) and the resource it addresses.
    pub fn of(info: &crate::request::RequestInfo, code: http::StatusCode) -> Self {
        let [verb, group, version, resource, subresource] = labels_of(info).map(str::to_string);
        Self {
            verb,
            group,
            version,
            resource,
            subresource,
            code: code.as_u16().to_string(),
        }
    }

    /// The labels of the request's latency histogram.
    fn latency(&self) -> LatencyLabels {
        LatencyLabels {
            verb: self.verb.clone(),
            group: self.group.clone(),
            resource: self.resource.clone(),
            subresource: self.subresource.clone(),
        }
    }
}

/// Labels of a latency histogram (no code, as kube-apiserver's).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LatencyLabels {
    /// See [`RequestLabels::verb`].
    pub verb: String,
    /// See [`RequestLabels::group`].
    pub group: String,
    /// See [`RequestLabels::resource`].
    pub resource: String,
    /// See [`RequestLabels::subresource`].
    pub subresource: String,
}

/// Labels of open long-running requests.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WatchLabels {
    /// `WATCH`.
    pub verb: String,
    /// See [`RequestLabels::group`].
    pub group: String,
    /// See [`RequestLabels::resource`].
    pub resource: String,
}

/// Labels of a storage operation.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StorageLabels {
    /// `create`, `get`, `list`, `update`, `delete`, `watch`, ...
    pub operation: String,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    // 1 ms to ~16 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

/// Every metric the server exports.
pub struct Metrics {
    registry: Registry,
    /// `apiserver_request_total`.
    pub requests: Family<RequestLabels, Counter>,
    /// `apiserver_request_duration_seconds`.
    pub request_duration: HistogramFamily<LatencyLabels>,
    /// `apiserver_longrunning_requests`: open watches.
    pub long_running: Family<WatchLabels, Gauge>,
    /// `kapi_storage_operation_duration_seconds`.
    pub storage_duration: HistogramFamily<StorageLabels>,
    /// `leader_election_master_status`: 1 while this replica holds the controllers'
    /// Lease (client-go's metric).
    pub leader: Gauge,
    /// `kapi_watch_cache_bytes`: what the watch caches' event windows hold, read from
    /// their budgets at each scrape.
    watch_cache_bytes: Gauge,
    /// `kapi_watch_cache_budget_bytes`: the limit of those budgets.
    watch_cache_budget_bytes: Gauge,
    /// The budgets (one per registry), dropped with their registry.
    watch_cache_budgets: Mutex<Vec<Weak<WatchCacheBudget>>>,
    /// Priority and fairness (one per server), dropped with its server.
    flow_controllers: Mutex<Vec<Weak<crate::flowcontrol::Controller>>>,
    /// Every resource's watch cache with its group-resource, dropped with its registry.
    watch_caches: Mutex<Vec<(String, Weak<Cacher>)>>,
    /// The request series met so far, by [`series_key`]: the families find a series by
    /// hashing owned labels, which cost a request seven strings and two lookups.
    request_series: RwLock<HashMap<Box<str>, RequestSeries>>,
}

/// One request series' counter and histogram, shared with their families.
struct RequestSeries {
    count: Counter,
    duration: Histogram,
}

impl RequestSeries {
    /// Counts one request that took `seconds`.
    fn observe(&self, seconds: f64) {
        self.count.inc();
        self.duration.observe(seconds);
    }
}

/// A request's labels but its code: kube-apiserver's verb (`LIST`, `WATCH`, ...), then
/// the group, version, resource and subresource it addresses (empty for none).
fn labels_of(info: &crate::request::RequestInfo) -> [&str; 5] {
    let verb = crate::request::Verb::metric_label(info.verb, &info.method);
    match info.resource() {
        Some(r) => [
            verb,
            &r.group,
            &r.version,
            &r.plural,
            r.subresource.as_deref().unwrap_or_default(),
        ],
        None => [verb, "", "", "", ""],
    }
}

/// Writes into `key` what tells `info`'s request series from every other (each label
/// behind its length, so no two label sets meet); false for a label too long for that.
fn series_key(
    key: &mut String,
    info: &crate::request::RequestInfo,
    code: http::StatusCode,
) -> bool {
    key.clear();
    for label in labels_of(info) {
        let Some(len) = u32::try_from(label.len()).ok().and_then(char::from_u32) else {
            return false;
        };
        key.push(len);
        key.push_str(label);
    }
    key.push(char::from(code.as_u16() as u8));
    key.push(char::from((code.as_u16() >> 8) as u8));
    true
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let request_duration: HistogramFamily<LatencyLabels> =
            Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        let long_running = Family::<WatchLabels, Gauge>::default();
        let storage_duration: HistogramFamily<StorageLabels> =
            Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register(
            "apiserver_request",
            "Counter of apiserver requests broken out for each verb, group, version, resource, subresource and HTTP response code",
            requests.clone(),
        );
        registry.register(
            "apiserver_request_duration_seconds",
            "Response latency distribution in seconds for each verb, group, resource and subresource",
            request_duration.clone(),
        );
        registry.register(
            "apiserver_longrunning_requests",
            "Gauge of all active long-running apiserver requests (watches) broken out by verb, group and resource",
            long_running.clone(),
        );
        registry.register(
            "kapi_storage_operation_duration_seconds",
            "Storage operation latency distribution in seconds for each operation",
            storage_duration.clone(),
        );
        let leader = Gauge::default();
        registry.register(
            "leader_election_master_status",
            "Whether this replica leads: 1 while it holds the controllers' Lease, 0 otherwise",
            leader.clone(),
        );
        let watch_cache_bytes = Gauge::default();
        registry.register(
            "kapi_watch_cache_bytes",
            "Bytes held by the watch caches' event windows (events, previous values and memoised encodings)",
            watch_cache_bytes.clone(),
        );
        let watch_cache_budget_bytes = Gauge::default();
        registry.register(
            "kapi_watch_cache_budget_bytes",
            "The most bytes the watch caches' event windows may hold together (--watch-cache-total-budget-bytes)",
            watch_cache_budget_bytes.clone(),
        );
        Self {
            registry,
            requests,
            request_duration,
            long_running,
            storage_duration,
            leader,
            watch_cache_bytes,
            watch_cache_budget_bytes,
            watch_cache_budgets: Mutex::new(Vec::new()),
            flow_controllers: Mutex::new(Vec::new()),
            watch_caches: Mutex::new(Vec::new()),
            request_series: RwLock::default(),
        }
    }

    /// The process-wide metrics.
    pub fn global() -> &'static Metrics {
        static METRICS: OnceLock<Metrics> = OnceLock::new();
        METRICS.get_or_init(Metrics::new)
    }

    /// Reports `budget` (shared by the watch caches of one registry) in
    /// `kapi_watch_cache_bytes` while it lives.
    pub fn watch_cache_budget(&self, budget: &Arc<WatchCacheBudget>) {
        let mut budgets = self
            .watch_cache_budgets
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        budgets.retain(|b| b.strong_count() > 0);
        budgets.push(Arc::downgrade(budget));
    }

    /// Reports `controller`'s `apiserver_flowcontrol_*` series while it lives.
    pub fn flow_controller(&self, controller: &Arc<crate::flowcontrol::Controller>) {
        let mut controllers = self
            .flow_controllers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        controllers.retain(|c| c.strong_count() > 0);
        controllers.push(Arc::downgrade(controller));
    }

    /// Reports `cache`'s consistent reads in `apiserver_watch_cache_consistent_read_total`
    /// under `resource` (kube's group-resource: `configmaps`, `deployments.apps`) while
    /// it lives.
    pub fn watch_cache(&self, resource: &str, cache: &Arc<Cacher>) {
        let mut caches = self
            .watch_caches
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        caches.retain(|(_, c)| c.strong_count() > 0);
        caches.push((resource.to_string(), Arc::downgrade(cache)));
    }

    /// kube-apiserver's `apiserver_watch_cache_consistent_read_total`: consistent reads
    /// answered from a watch cache (`fallback="false"`) and those that waited for it and
    /// then read the store (`fallback="true"`), per resource.
    fn consistent_reads(&self) -> String {
        let mut totals: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
        for (resource, cache) in self
            .watch_caches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            if let Some(cache) = cache.upgrade() {
                let stats = cache.stats();
                let total = totals.entry(resource.clone()).or_default();
                total.0 += stats.consistent_reads_from_cache;
                total.1 += stats.consistent_read_fallbacks;
            }
        }
        let name = "apiserver_watch_cache_consistent_read";
        let mut out = format!(
            "# HELP {name} Counter for consistent reads from cache.\n# TYPE {name} counter\n"
        );
        for (resource, (served, fallbacks)) in totals {
            for (fallback, n) in [("false", served), ("true", fallbacks)] {
                out.push_str(&format!(
                    "{name}_total{{fallback=\"{fallback}\",resource=\"{resource}\",success=\"true\"}} {n}\n"
                ));
            }
        }
        out
    }

    /// Everything in the Prometheus text format.
    pub fn encode(&self) -> String {
        let (used, limit) = self
            .watch_cache_budgets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .fold((0usize, 0usize), |(used, limit), b| {
                (
                    used.saturating_add(b.used()),
                    limit.saturating_add(b.limit()),
                )
            });
        self.watch_cache_bytes
            .set(i64::try_from(used).unwrap_or(i64::MAX));
        self.watch_cache_budget_bytes
            .set(i64::try_from(limit).unwrap_or(i64::MAX));
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        // Series rendered from live counters go before the closing `# EOF`.
        let flow: String = self
            .flow_controllers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .map(|c| crate::flowcontrol::metrics::render(&c))
            .chain(std::iter::once(self.consistent_reads()))
            .collect();
        if !flow.is_empty() {
            match out.rfind("# EOF") {
                Some(at) => out.insert_str(at, &flow),
                None => out.push_str(&flow),
            }
        }
        out
    }

    /// Records one request, resolved as `info` and answered with `code` after
    /// `seconds`.
    pub fn observe_request(
        &self,
        info: &crate::request::RequestInfo,
        code: http::StatusCode,
        seconds: f64,
    ) {
        thread_local! {
            static KEY: RefCell<String> = const { RefCell::new(String::new()) };
        }
        KEY.with_borrow_mut(|key| {
            if !series_key(key, info, code) {
                return self.observe_labelled(RequestLabels::of(info, code), seconds);
            }
            let series = self
                .request_series
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(series) = series.get(key.as_str()) {
                return series.observe(seconds);
            }
            drop(series);
            let labels = RequestLabels::of(info, code);
            let series = RequestSeries {
                duration: self
                    .request_duration
                    .get_or_create(&labels.latency())
                    .clone(),
                count: self.requests.get_or_create(&labels).clone(),
            };
            series.observe(seconds);
            self.request_series
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key.as_str().into(), series);
        })
    }

    /// Records one request by its labels, looked up in the families.
    fn observe_labelled(&self, labels: RequestLabels, seconds: f64) {
        self.request_duration
            .get_or_create(&labels.latency())
            .observe(seconds);
        self.requests.get_or_create(&labels).inc();
    }

    /// Counts an open watch until the returned guard is dropped.
    pub fn watch_opened(&self, group: &str, resource: &str) -> WatchGuard {
        let labels = WatchLabels {
            verb: "WATCH".into(),
            group: group.to_string(),
            resource: resource.to_string(),
        };
        self.long_running.get_or_create(&labels).inc();
        WatchGuard { labels }
    }
}

/// Decrements the open-watch gauge when the watch ends.
pub struct WatchGuard {
    labels: WatchLabels,
}

impl Drop for WatchGuard {
    fn drop(&mut self) {
        Metrics::global()
            .long_running
            .get_or_create(&self.labels)
            .dec();
    }
}

/// A `Storage` that times every operation of the one it wraps.
pub struct InstrumentedStorage {
    inner: Arc<dyn Storage>,
}

impl InstrumentedStorage {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Storage>) -> Self {
        Self { inner }
    }
}

async fn timed<T>(operation: &str, f: impl std::future::Future<Output = T>) -> T {
    let start = Instant::now();
    let out = f.await;
    Metrics::global()
        .storage_duration
        .get_or_create(&StorageLabels {
            operation: operation.to_string(),
        })
        .observe(start.elapsed().as_secs_f64());
    out
}

#[async_trait]
impl Storage for InstrumentedStorage {
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        timed("create", self.inner.create(key, value)).await
    }
    async fn create_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        timed("create", self.inner.create_with_ttl(key, value, ttl)).await
    }
    async fn get(&self, key: &str, read_at: ReadAt) -> Result<Option<KeyValue>> {
        timed("get", self.inner.get(key, read_at)).await
    }
    async fn list(&self, request: &ListRequest) -> Result<ListResponse> {
        timed("list", self.inner.list(request)).await
    }
    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        timed("update", self.inner.update(key, value, expected)).await
    }
    async fn update_with_ttl(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
        ttl: Duration,
    ) -> Result<KeyValue> {
        timed(
            "update",
            self.inner.update_with_ttl(key, value, expected, ttl),
        )
        .await
    }
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<Deleted> {
        timed("delete", self.inner.delete(key, expected)).await
    }
    async fn watch(&self, prefix: &str, after: Revision) -> Result<WatchStream> {
        timed("watch", self.inner.watch(prefix, after)).await
    }
    async fn watch_with_progress(
        &self,
        prefix: &str,
        after: Revision,
        requests: &kapi_storage::ProgressRequests,
    ) -> Result<WatchStream> {
        timed(
            "watch",
            self.inner.watch_with_progress(prefix, after, requests),
        )
        .await
    }
    fn answers_progress_requests(&self) -> bool {
        self.inner.answers_progress_requests()
    }
    async fn current_revision(&self) -> Result<Revision> {
        timed("current_revision", self.inner.current_revision()).await
    }
    async fn compact(&self, revision: Revision) -> Result<()> {
        timed("compact", self.inner.compact(revision)).await
    }
    async fn compacted_revision(&self) -> Result<Revision> {
        self.inner.compacted_revision().await
    }
    async fn close(&self) -> Result<()> {
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    use http::{Method, StatusCode, Uri};

    use super::*;
    use crate::request::RequestInfo;

    fn info(method: Method, uri: &str) -> RequestInfo {
        RequestInfo::resolve(&method, &uri.parse::<Uri>().unwrap())
    }

    #[test]
    fn each_series_counts_its_own_requests() {
        let metrics = Metrics::new();
        let list = info(Method::GET, "/apis/example.kapi.dev/v1/widgets");
        let get = info(
            Method::GET,
            "/apis/example.kapi.dev/v1/namespaces/a/widgets/w",
        );
        // Labels that would run together (`widgets` and no subresource) without their
        // lengths.
        let odd = info(
            Method::GET,
            "/apis/example.kapi.dev/v1/namespaces/a/widget/w/s",
        );
        for _ in 0..3 {
            metrics.observe_request(&list, StatusCode::OK, 0.002);
        }
        metrics.observe_request(&get, StatusCode::OK, 0.002);
        metrics.observe_request(&get, StatusCode::NOT_FOUND, 0.002);
        metrics.observe_request(&odd, StatusCode::OK, 0.002);
        let text = metrics.encode();
        let count = |labels: &str| {
            let line = format!("apiserver_request_total{{{labels}}} ");
            text.lines()
                .find_map(|l| l.strip_prefix(line.as_str()))
                .unwrap_or_else(|| panic!("{line} in {text}"))
                .to_string()
        };
        let series = |verb: &str, resource: &str, sub: &str, code: u16| {
            format!(
                r#"verb="{verb}",group="example.kapi.dev",version="v1",resource="{resource}",subresource="{sub}",code="{code}""#
            )
        };
        assert_eq!(count(&series("LIST", "widgets", "", 200)), "3");
        assert_eq!(count(&series("GET", "widgets", "", 200)), "1");
        assert_eq!(count(&series("GET", "widgets", "", 404)), "1");
        assert_eq!(count(&series("GET", "widget", "s", 200)), "1");
        let durations = r#"apiserver_request_duration_seconds_count{verb="LIST",group="example.kapi.dev",resource="widgets",subresource=""} 3"#;
        assert!(text.lines().any(|l| l == durations), "{text}");
    }
}
