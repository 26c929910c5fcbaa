//! What an operator's tooling asks of a running Gatehouse: the health
//! probes an orchestrator polls ([`probes`]), the metrics Prometheus
//! scrapes ([`scrape`]) and the id each request is known by
//! ([`request_id`]). It reads the database only through `db/` and
//! holds no route of the sign-in.

pub mod check;
pub mod probes;
pub mod request_id;
pub mod request_log;
pub mod scrape;
pub mod traced;
