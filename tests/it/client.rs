//! The typed client against the simulator with each fault on: results are
//! exact and every retry is accounted for; 4xx are not retried; the key
//! never appears in errors.

use crate::common::*;
use chainetl::api::{ApiError, Client, ClientConfig, EventsQuery, Secret, Sort, Stats};
use chainetl::spec::SimOptions;
use chainetl::vocab::chain::Chain;
use std::time::Duration;

fn config(url: String) -> ClientConfig {
    let mut c = ClientConfig::new(url);
    c.max_retries = 40;
    c.min_backoff = Duration::from_millis(5);
    c.max_backoff = Duration::from_millis(200);
    c.timeout = Duration::from_secs(5);
    c
}

async fn drain(client: &Client) -> (Vec<(i64, i64, String)>, u64) {
    let mut out = Vec::new();
    let mut pages = 0;
    let mut q = EventsQuery {
        window: Some("20000000..20000060".into()),
        sort: Some(Sort::Earliest),
        limit: Some(90),
        ..Default::default()
    };
    loop {
        let (rows, next) = client
            .events(Chain::Polygon, &q, |p| {
                let rows: Vec<_> = p
                    .events
                    .into_iter()
                    .map(|e| {
                        let topics: Vec<String> = e
                            .topics
                            .unwrap()
                            .into_iter()
                            .map(|t| chainetl::decode::topic_hex(&t.unwrap().0).unwrap().into_owned())
                            .collect();
                        (e.block_number.unwrap().0, e.log_index.unwrap().0, topics.join(","))
                    })
                    .collect();
                (rows, p.next_cursor)
            })
            .await
            .unwrap();
        pages += 1;
        out.extend(rows);
        match next {
            Some(c) => q.cursor = Some(c),
            None => return (out, pages),
        }
    }
}

#[test]
fn exact_results_through_every_fault_with_every_retry_counted() {
    let clean = Sim::start(frozen());
    let (want, pages) = clean.rt.block_on(drain(&Client::new(config(clean.url())).unwrap()));
    assert!(want.len() > 1000);
    let faults: [(&str, SimOptions); 5] = [
        (
            "5xx",
            SimOptions {
                error_rate: 0.3,
                ..frozen()
            },
        ),
        (
            "resets",
            SimOptions {
                reset_rate: 0.3,
                ..frozen()
            },
        ),
        (
            "truncated",
            SimOptions {
                truncate_rate: 0.3,
                ..frozen()
            },
        ),
        (
            "numeric topics",
            SimOptions {
                topics_as_numbers: true,
                ..frozen()
            },
        ),
        (
            "quota",
            SimOptions {
                quota_rps: 8.0,
                ..frozen()
            },
        ),
    ];
    for (name, opts) in faults {
        let sim = Sim::start(opts);
        let client = Client::new(config(sim.url())).unwrap();
        let (got, _) = sim.rt.block_on(drain(&client));
        assert_eq!(got, want, "{name}: results differ");
        let s = client.stats();
        let failures =
            Stats::get(&s.server_errors) + Stats::get(&s.throttled) + Stats::get(&s.transport_errors) + Stats::get(&s.bad_bodies);
        assert_eq!(
            Stats::get(&s.retries),
            failures,
            "{name}: every failed attempt is retried once and counted"
        );
        assert_eq!(Stats::get(&s.requests), pages + failures, "{name}: attempts = pages + retries");
        if name != "numeric topics" {
            assert!(failures > 0, "{name}: the fault never fired");
        }
    }
}

#[test]
fn client_errors_are_not_retried_and_carry_the_message_and_path() {
    let sim = Sim::start(SimOptions {
        api_key: Some("right-key".into()),
        ..frozen()
    });
    let client = Client::new(config(sim.url())).unwrap();
    let q = EventsQuery {
        window: Some("7x".into()),
        ..Default::default()
    };
    let e = sim.rt.block_on(client.events(Chain::Base, &q, |_| ())).unwrap_err();
    assert!(matches!(e, ApiError::Rejected { status: 400, .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("/v2/base/events?window=7x") && msg.contains("invalid_parameter"),
        "{msg}"
    );
    assert_eq!(Stats::get(&client.stats().requests), 1, "a 400 is not retried");

    let mut cfg = config(sim.url());
    cfg.api_key = Some(Secret::new("wrong-key-value".into()));
    cfg.api_key_env = Some("BDS_API_KEY".into());
    let client = Client::new(cfg).unwrap();
    let e = sim.rt.block_on(client.block(Chain::Base, None)).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("refused the API key") && msg.contains("$BDS_API_KEY"), "{msg}");
    assert!(
        !msg.contains("wrong-key-value")
            && !format!("{e:?}").contains("wrong-key-value")
            && !format!("{client:?}").contains("wrong-key-value")
    );
}

#[test]
fn an_unreachable_service_says_so_quickly() {
    // Port 1 (tcpmux) listens nowhere here; an ephemeral port freed for
    // the test could be taken meanwhile by another test's simulator.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut cfg = config("http://127.0.0.1:1".to_string());
    cfg.max_retries = 2;
    let client = Client::new(cfg).unwrap();
    let t = std::time::Instant::now();
    let e = rt.block_on(client.block(Chain::Base, None)).unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(matches!(e, ApiError::Unreachable { attempts: 3, .. }), "{e:?}");
    assert!(e.to_string().contains("cannot reach the service"), "{e}");
}
