//! Answering one resolved request: a collection page, one entity, a count,
//! or a navigation of an entity — each under the caller's scope.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use super::ctx::{Ctx, Source};
use super::expansion::key_type;
use super::page::Read;
use super::path::KeySegment;
use super::reply::{ODataError, Reply};
use super::rows::{run, scalar};
use super::sinks::{Entity, EntitySink, Layout, VALUE_OPEN};
use super::values::write_str;
use crate::db::Dialect;
use crate::odata::check::{check_query, Checked};
use crate::odata::fetch::{count_restricted, fetch_query, Fetch, Restriction};
use crate::odata::model::{EdmType, EntitySet, NavigationKind};
use crate::odata::paging::Page;
use crate::odata::query::{Literal, Path, Query, Select};
use crate::odata::sql::Sql;
use crate::odata::typing::literal_type;

/// Characters escaped in a key written into a URL path.
const KEY_IN_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'?')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}');

impl<'m> Ctx<'m> {
    /// The engine's dialect.
    pub fn dialect(&self) -> Dialect {
        self.db.dialect()
    }

    /// The table column of `set`'s key.
    pub fn key_column(&self, set: &EntitySet) -> Result<String, ODataError> {
        set.key_property()
            .map(|k| k.column.clone())
            .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))
    }

    /// A key as written in a resource path, URL-safe.
    pub fn key_in_path(&self, key: &Literal) -> String {
        utf8_percent_encode(&key.to_string(), KEY_IN_PATH).to_string()
    }

    /// The rows `restriction` admits, as a restriction on `set`'s key.
    pub fn key_restriction(
        &self,
        set: &EntitySet,
        key: &KeySegment,
    ) -> Result<Restriction, ODataError> {
        let property = set
            .key_property()
            .ok_or_else(|| ODataError::internal(&format!("{} has no key", set.name)))?;
        if key.name.as_ref().is_some_and(|n| *n != property.name) {
            return Err(ODataError::invalid_key(format!(
                "{} is keyed by '{}'",
                set.name, property.name
            )));
        }
        let fits = match (property.edm_type, literal_type(&key.value)) {
            (expected, Some(given)) if expected == given => true,
            (expected, Some(given)) => expected.is_integer() && given.is_integer(),
            _ => false,
        };
        if !fits {
            return Err(ODataError::invalid_key(format!(
                "the key of {} is an {}; '{}' is not",
                set.name,
                property.edm_type.name(),
                key.value
            )));
        }
        Ok(Restriction {
            column: property.column.clone(),
            values: vec![key.value.clone()],
        })
    }

    /// `query` checked against the model for `set`: once per request,
    /// before any statement runs (a request whose options are wrong is 400
    /// whatever the data), for every statement that answers it.
    pub(super) fn check<'q>(
        &self,
        set: &'m EntitySet,
        query: &'q Query,
    ) -> Result<Checked<'m, 'q>, ODataError> {
        Ok(check_query(&self.service.model, set, query)?)
    }

    /// The one entity of `source` (already restricted to a key), or 404.
    pub async fn entity(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        query: &Query,
    ) -> Result<Reply, ODataError> {
        let set = source.set;
        let mut body = Vec::new();
        let read = Read {
            page: Page::first(1),
            count: false,
            seeking: None,
        };
        let (found, _, _) = self.rows(source, checked, read, &mut body).await?;
        if found == 0 {
            return Err(ODataError::not_found(format!(
                "no such entity in {}",
                set.name
            )));
        }
        let mut out = Vec::with_capacity(body.len() + 128);
        out.extend_from_slice(b"{\"@odata.context\":");
        write_str(&mut out, &self.context(&set.name, query, true));
        out.push(b',');
        // `,"value":[{` then the entity's properties.
        let properties = body.strip_prefix(VALUE_OPEN).unwrap_or(&body);
        out.extend_from_slice(properties.get(1..).unwrap_or_default());
        Ok(Reply::json(out))
    }

    /// The plain-text count of `source` under the checked query's filter
    /// and search.
    pub async fn count(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
    ) -> Result<Reply, ODataError> {
        let n = scalar(self.db, self.count_sql(source, checked)?).await?;
        let mut reply = Reply::json(n.to_string().into_bytes());
        reply.content_type = rocket::http::ContentType::Plain;
        Ok(reply)
    }

    /// The statement counting the rows of `source` that `checked`'s filter
    /// and search admit, under the caller's scope.
    pub(super) fn count_sql(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
    ) -> Result<Sql, ODataError> {
        Ok(count_restricted(
            checked,
            source.restriction.as_ref(),
            Some(&self.scopes),
            self.dialect(),
        )?)
    }

    /// The set navigation `name` of `set` leads to, and whether it is a
    /// collection; 404 when there is no such navigation. Asks no database.
    pub fn navigation_target(
        &self,
        set: &'m EntitySet,
        name: &str,
    ) -> Result<(&'m EntitySet, bool), ODataError> {
        let nav = set.find_navigation(name).ok_or_else(|| {
            ODataError::not_found(format!("{} has no navigation '{name}'", set.name))
        })?;
        let target = self
            .service
            .model
            .target_of(nav)
            .ok_or_else(|| ODataError::not_found(format!("'{name}' leads nowhere")))?;
        Ok((target, nav.is_collection()))
    }

    /// Where navigation `name` of the entity `key` of `set` leads: the
    /// related rows as a source, or `None` for a to-one navigation that
    /// leads to no entity. 404 when the entity or navigation does not exist
    /// (for this caller).
    pub async fn navigate(
        &self,
        set: &'m EntitySet,
        key: &KeySegment,
        name: &str,
    ) -> Result<(Option<Source<'m>>, bool), ODataError> {
        let (target, _) = self.navigation_target(set, name)?;
        let nav = set.find_navigation(name).ok_or_else(|| {
            ODataError::not_found(format!("{} has no navigation '{name}'", set.name))
        })?;
        let restriction = self.key_restriction(set, key)?;
        let internal = match &nav.kind {
            NavigationKind::ToOne { column } => vec![column.clone()],
            NavigationKind::ToMany { .. } => Vec::new(),
        };
        let parent = self
            .parent(set, restriction, internal, key_type(target))
            .await?;
        let Some(parent) = parent else {
            return Err(ODataError::not_found(format!(
                "no such entity in {}",
                set.name
            )));
        };
        let path = format!(
            "{}({})/{}",
            set.name,
            self.key_in_path(&parent.key),
            nav.name
        );
        let restriction = match &nav.kind {
            NavigationKind::ToOne { .. } => match parent.internal.into_iter().next().flatten() {
                Some(fk) => Restriction {
                    column: self.key_column(target)?,
                    values: vec![fk],
                },
                None => return Ok((None, false)),
            },
            NavigationKind::ToMany { remote_column } => Restriction {
                column: remote_column.clone(),
                values: vec![parent.key],
            },
        };
        let source = Source {
            set: target,
            restriction: Some(restriction),
            path,
        };
        Ok((Some(source), nav.is_collection()))
    }

    /// The entity of `set` that `restriction` picks, reading `internal` too.
    async fn parent(
        &self,
        set: &'m EntitySet,
        restriction: Restriction,
        internal: Vec<String>,
        internal_type: EdmType,
    ) -> Result<Option<Entity>, ODataError> {
        let query = Query {
            select: Some(Select::Paths(vec![Path::single(&set.key)])),
            ..Query::default()
        };
        let checked = self.check(set, &query)?;
        let types = vec![internal_type; internal.len()];
        let fetch = Fetch {
            restriction: Some(&restriction),
            per_value: false,
            internal,
            page: Page::first(1),
            scopes: Some(&self.scopes),
            count: false,
        };
        let sql = fetch_query(&checked, &fetch, self.dialect())?;
        let layout = Layout::new(checked.selected(), &set.key, types, None, self.numbers);
        let sink = EntitySink::new(layout);
        let (sink, _) = run(self.db, sql, 1, sink).await?;
        let found = sink.entities.into_iter().next();
        Ok(found)
    }
}
