//! What every `/odata` request shares ([`Service`]), made once on ignite.

use crate::config::{ConfigError, ODataSettings, PaginationSettings};
use crate::db::{Db, Readers};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::odata::check::paging::Page;
use crate::odata::check::scopes::Scopes;
use crate::odata::check::skiptoken::SkipTokens;
use crate::odata::model::scope::Caller;
use crate::odata::model::sets::{EntitySet, Model};
use crate::odata::plan::ctx::{Numbers, ODataRequest};
use crate::odata::service::run::{Counted, Ctx};

/// What every `/odata` request shares: the model, the paging policy and
/// batch limit, the token key, the database and the readers of its sets.
#[derive(Debug)]
pub struct Service {
    /// The declared sets.
    pub model: Model,
    /// `base_url` without a trailing slash, for context URLs and next links.
    pub origin: String,
    /// Page sizes.
    pub pagination: PaginationSettings,
    /// The most requests a `$batch` may hold.
    pub batch_max: usize,
    /// Signs and opens the `$skiptoken`s of next links.
    pub tokens: SkipTokens,
    /// The host's database: bearer tokens are looked up in it.
    pub db: Db,
    /// What the sets are read through (spread over replicas when there
    /// are some).
    pub readers: Readers,
    /// The same readers on the primary alone.
    primary: Readers,
    /// Where its reads are counted.
    pub(crate) metrics: Metrics,
    /// Where a token's use from a new address is reported.
    pub(crate) events: Events,
}

impl Service {
    /// The service over `model`, refusing a model whose sets contradict
    /// each other (duplicate names, a key or searchable property that is not
    /// declared, a navigation to an unknown set).
    pub fn new(
        model: Model,
        origin: &str,
        settings: &ODataSettings,
        tokens: SkipTokens,
        db: Db,
        readers: Readers,
    ) -> Result<Service, ConfigError> {
        validate(&model)?;
        Ok(Service {
            model,
            origin: origin.trim_end_matches('/').to_owned(),
            pagination: settings.pagination.clone(),
            batch_max: settings.batch_max,
            tokens,
            primary: readers.on_primary(),
            readers,
            db,
            metrics: Metrics::off(),
            events: Events::default(),
        })
    }

    /// This service, its reads counted in `metrics`.
    pub(crate) fn counted_in(mut self, metrics: &Metrics) -> Service {
        self.metrics = metrics.clone();
        self
    }

    /// This service, a token's use from a new address reported to `events`.
    pub(crate) fn reporting_to(mut self, events: &Events) -> Service {
        self.events = events.clone();
        self
    }

    /// The readers `set` is read through: the primary's for the security
    /// activity log (an event just recorded is shown at once), else the
    /// service's, replicas included.
    pub(crate) fn db_for(&self, set: &EntitySet) -> &Readers {
        match set.table == crate::odata::model::security_events::TABLE {
            true => &self.primary,
            false => &self.readers,
        }
    }

    /// What reading `set` for `caller` works with: the request its plan
    /// is made for, and the readers of `set`.
    pub(crate) fn ctx<'m>(
        &'m self,
        set: &EntitySet,
        caller: Caller,
        page: Page,
        scopes: Scopes<'m>,
        numbers: Numbers,
    ) -> Ctx<'m> {
        let db = self.db_for(set);
        Ctx {
            request: ODataRequest {
                model: &self.model,
                tokens: &self.tokens,
                origin: &self.origin,
                dialect: db.dialect(),
                caller,
                page,
                scopes,
                numbers,
            },
            db,
            counted: Counted {
                rows: self.metrics.odata_rows(&set.name),
                metrics: self.metrics.clone(),
                engine: db.dialect().system_name(),
            },
        }
    }
}

fn validate(model: &Model) -> Result<(), ConfigError> {
    for (i, set) in model.sets.iter().enumerate() {
        let key = |k: &str| format!("odata.sets.{}.{k}", set.name);
        if model.sets[..i].iter().any(|s| s.name == set.name) {
            return Err(ConfigError::new(&key("table"), "the set is declared twice"));
        }
        if set.key_property().is_none() {
            return Err(ConfigError::new(&key("key"), "names no declared property"));
        }
        if let Some(bad) = set.searchable.iter().find(|n| {
            set.find_property(n)
                .is_none_or(|p| p.edm_type != crate::odata::EdmType::String)
        }) {
            return Err(ConfigError::new(
                &key("searchable"),
                format!("`{bad}` is not a string property"),
            ));
        }
        for nav in &set.navigations {
            if model.find(&nav.target_set).is_none() {
                return Err(ConfigError::new(
                    &key(&format!("navigation.{}", nav.name)),
                    format!("leads to `{}`, which is not a declared set", nav.target_set),
                ));
            }
        }
    }
    Ok(())
}
