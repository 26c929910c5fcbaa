//! What an operator's tooling asks of a running Gatehouse: the health
//! probes an orchestrator polls ([`probes`]) and the id each request is
//! known by ([`request_id`]). It reads the database only through `db/` and
//! holds no route of the sign-in.

pub mod probes;
pub mod request_id;
