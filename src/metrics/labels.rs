//! The label sets of Gatehouse's metrics: bounded values only (a route's
//! template, an event's type, a set's name, a status), never a user, an
//! address or text a caller wrote.

use prometheus_client::encoding::EncodeLabelSet;

/// An HTTP answer's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct HttpLabels {
    pub(super) method: String,
    pub(super) route: String,
    pub(super) status: u16,
}

/// A route's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RouteLabel {
    pub(super) route: String,
}

/// A security event's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct EventLabels {
    pub(super) event: String,
    pub(super) method: String,
}

/// A throttle's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct KindLabel {
    pub(super) kind: String,
}

/// An OData read's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ODataLabels {
    pub(super) set: String,
    pub(super) kind: String,
    pub(super) status: u16,
}

/// A set's label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct SetLabel {
    pub(super) set: String,
}

/// A statement's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct StatementLabels {
    pub(super) engine: String,
    pub(super) kind: String,
}

/// A pool connection's state.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct StateLabel {
    pub(super) state: &'static str,
}

/// A mail's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct MailLabels {
    pub(super) kind: String,
    pub(super) result: &'static str,
}

/// A replica's place in `odata.replicas`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct ReplicaLabel {
    pub(super) replica: usize,
}

/// The build's version.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct VersionLabel {
    pub(super) version: &'static str,
}
