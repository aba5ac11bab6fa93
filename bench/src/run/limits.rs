//! The limits kapi's cells are compared with: the bare hyper server, the embedded
//! store's own API and (feature `etcd`) raw etcd, each cell measured only when a
//! cell of the run compares with it ([`Config::wants_limit`]).

use bytes::Bytes;

use super::{Backend, Config, measure};
use crate::client::{self, Transport};
use crate::driver::Load;
use crate::report::{Cell, Limit, Results, System};
use crate::targets::baseline::{Baseline, OBJECT_PATH, list_path};
use crate::targets::embedded::{Operation as StoreOperation, RawEmbedded};
use crate::targets::kapi_http::Operation;

/// What kapi's `operation` on `backend` is compared with in its row: its storage's own
/// operation, or the bare server for what the watch cache serves.
pub(super) fn kapi_limit(
    backend: Backend,
    operation: Operation,
    transport: Transport,
) -> Option<Limit> {
    match (operation, backend) {
        (Operation::GetCached, _) => Some(Limit::BaselineGet(transport)),
        (Operation::List(objects), _) => Some(Limit::BaselineList(transport, objects)),
        (Operation::Create, Backend::Etcd) => Some(Limit::EtcdTxnCreate),
        (Operation::Update, Backend::Etcd) => Some(Limit::EtcdTxnUpdate),
        (Operation::GetConsistent, Backend::Etcd) => Some(Limit::EtcdRangeKey),
        (Operation::Create, Backend::Embedded) => Some(Limit::StoreCreate),
        (Operation::Update, Backend::Embedded) => Some(Limit::StoreUpdate),
        (Operation::GetConsistent, Backend::Embedded) => Some(Limit::StoreGet),
        _ => None,
    }
}

/// The bare hyper server: the 1 KiB GET at every client count, and each of kapi's
/// list bodies at its list's client counts, over both transports.
pub(super) async fn baseline(
    config: &Config,
    list_bodies: Vec<(usize, Bytes)>,
    results: &mut Results,
) -> Result<(), String> {
    let mut cells: Vec<(String, String, Limit, usize, Load)> = Vec::new();
    for transport in Transport::ALL {
        let gets = if config.wants_limit(Limit::BaselineGet(transport)) {
            config.clients.as_slice()
        } else {
            &[]
        };
        for &clients in gets {
            cells.push((
                OBJECT_PATH.to_string(),
                "GET 1 KiB object".to_string(),
                Limit::BaselineGet(transport),
                clients,
                config.load,
            ));
        }
        for (objects, body) in &list_bodies {
            let Some(plan) = config.lists.iter().find(|l| l.objects == *objects) else {
                continue;
            };
            for &clients in &plan.clients {
                cells.push((
                    list_path(*objects),
                    format!("GET copy of list {objects} ({} KiB)", body.len() / 1024),
                    Limit::BaselineList(transport, *objects),
                    clients,
                    config.list_load(plan),
                ));
            }
        }
    }
    let bodies = list_bodies
        .iter()
        .map(|(objects, body)| (list_path(*objects), body.clone()))
        .collect();
    let server = Baseline::start(&config.bench, bodies).await?;
    for (path, operation, limit, clients, load) in cells {
        let transport = match limit {
            Limit::BaselineGet(t) | Limit::BaselineList(t, _) => t,
            _ => unreachable!("baseline cells are baseline limits"),
        };
        let connections = client::clients(server.addr(), transport, clients).await?;
        let workers = Baseline::get_workers(connections, &path);
        let cell = Cell {
            system: System::Baseline,
            operation,
            kapi: None,
            transport: transport.to_string(),
            clients,
            compare_with: None,
            is_limit: Some(limit),
        };
        results.rows.push(measure(load, workers, cell).await);
    }
    Ok(())
}

/// The embedded store's own API: create, get and CAS update at every client count,
/// lists of the list sizes at their client counts.
pub(super) async fn raw_store(config: &Config, results: &mut Results) -> Result<(), String> {
    let store = RawEmbedded::open().await?;
    store.preload_lists(&config.list_sizes()).await?;
    let mut cells: Vec<(StoreOperation, usize, Load)> = Vec::new();
    for operation in StoreOperation::SINGLE {
        for &clients in &config.clients {
            cells.push((operation, clients, config.load));
        }
    }
    for plan in &config.lists {
        for &clients in &plan.clients {
            let operation = StoreOperation::ListPrefix(plan.objects);
            cells.push((operation, clients, config.list_load(plan)));
        }
    }
    for (operation, clients, load) in cells {
        let limit = match operation {
            StoreOperation::Create => Limit::StoreCreate,
            StoreOperation::Get => Limit::StoreGet,
            StoreOperation::Update => Limit::StoreUpdate,
            StoreOperation::ListPrefix(objects) => Limit::StoreList(objects),
        };
        if !config.wants_limit(limit) {
            continue;
        }
        let workers = store.workers(operation, clients).await?;
        let cell = Cell {
            system: System::Store,
            operation: operation.to_string(),
            kapi: None,
            transport: "in-process".to_string(),
            clients,
            compare_with: None,
            is_limit: Some(limit),
        };
        results.rows.push(measure(load, workers, cell).await);
    }
    store.close().await
}

/// Raw etcd: put, txn create, txn CAS and range key at every client count, ranges of
/// the list sizes at their client counts, and the watch fan-outs.
#[cfg(feature = "etcd")]
pub(super) async fn raw_etcd(
    config: &Config,
    endpoint: &str,
    results: &mut Results,
) -> Result<(), String> {
    use crate::report::FanOutRow;
    use crate::targets::etcd::{Operation as EtcdOperation, RawEtcd};
    use crate::targets::etcd_watch;

    let etcd = RawEtcd::connect(endpoint).await?;
    etcd.preload_lists(&config.list_sizes()).await?;
    let mut cells: Vec<(EtcdOperation, usize, Load)> = Vec::new();
    for operation in EtcdOperation::SINGLE {
        for &clients in &config.clients {
            cells.push((operation, clients, config.load));
        }
    }
    for plan in &config.lists {
        for &clients in &plan.clients {
            let operation = EtcdOperation::RangePrefix(plan.objects);
            cells.push((operation, clients, config.list_load(plan)));
        }
    }
    for (operation, clients, load) in cells {
        let limit = match operation {
            EtcdOperation::Put => Limit::EtcdPut,
            EtcdOperation::TxnCreate => Limit::EtcdTxnCreate,
            EtcdOperation::TxnUpdate => Limit::EtcdTxnUpdate,
            EtcdOperation::RangeKey => Limit::EtcdRangeKey,
            EtcdOperation::RangePrefix(objects) => Limit::EtcdRangePrefix(objects),
        };
        if !config.wants_limit(limit) {
            continue;
        }
        let workers = etcd.workers(operation, clients).await?;
        let cell = Cell {
            system: System::Etcd,
            operation: operation.to_string(),
            kapi: None,
            transport: "gRPC".to_string(),
            clients,
            compare_with: None,
            is_limit: Some(limit),
        };
        results.rows.push(measure(load, workers, cell).await);
    }
    for (round, &watchers) in config.watchers.iter().enumerate() {
        let measured = etcd_watch::fan_out(endpoint, config.fan_out(watchers), round).await?;
        let row = FanOutRow {
            system: System::Etcd,
            measured,
        };
        eprintln!("{}", row.progress_line());
        results.fan_outs.push(row);
    }
    Ok(())
}
