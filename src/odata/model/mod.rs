//! The second step: the declared model — which entity sets exist, which
//! table backs each, their properties, navigations, hierarchies and scopes
//! (`sets`, `scope`), the sets declared in configuration (`declare`), the
//! security activity log as a set (`security_events`) and the service's
//! self-description (`metadata`, with `annotations` for hierarchies).

pub(crate) mod annotations;
pub(crate) mod declare;
pub(crate) mod metadata;
pub(crate) mod scope;
pub(crate) mod security_events;
pub(crate) mod sets;

#[cfg(test)]
pub(crate) mod fixture;
