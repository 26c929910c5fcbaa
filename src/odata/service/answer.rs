//! Answering one resolved request: a collection page, one entity, a count,
//! or a navigation of an entity — each under the caller's scope.

use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

use super::ctx::{Ctx, Source};
use super::expansion::{admit, attach, internal_types, key_type};
use super::path::KeySegment;
use super::reply::{ODataError, Reply};
use super::rows::{
    run, run_page, scalar, BodySink, Entity, EntitySink, InlineCount, Layout, OrderValues,
    PageRead, VALUE_OPEN,
};
use super::values::write_str;
use crate::db::Dialect;
use crate::odata::check::{check_query, Checked};
use crate::odata::fetch::{
    count_restricted, fetch_query, order_types, seek_statements, Fetch, Restriction,
};
use crate::odata::model::{EdmType, EntitySet, NavigationKind};
use crate::odata::paging::Page;
use crate::odata::query::{Literal, Path, Query, Select};
use crate::odata::resolve::QueryError;
use crate::odata::seek::Position;
use crate::odata::skiptoken::SkipTokens;
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

    /// `<origin>/odata/$metadata#<fragment>`.
    fn context(&self, fragment: &str) -> String {
        format!("{}/odata/$metadata#{fragment}", self.service.origin)
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

    /// `query` checked against the model for `set`: once per request, for
    /// every statement that answers it.
    fn check<'q>(
        &self,
        set: &'m EntitySet,
        query: &'q Query,
    ) -> Result<Checked<'m, 'q>, ODataError> {
        Ok(check_query(&self.service.model, set, query)?)
    }

    /// A page of `source` as the collection response.
    pub async fn collection(
        &self,
        source: &Source<'m>,
        query: &Query,
    ) -> Result<Reply, ODataError> {
        let set = source.set;
        let checked = self.check(set, query)?;
        let page = self.page.of(query);
        let mut body = Vec::with_capacity(256 + 128 * page.rows().min(1000) as usize);
        body.extend_from_slice(b"{\"@odata.context\":");
        write_str(
            &mut body,
            &self.context(&context_fragment(&set.name, query)),
        );
        let seeking = self.seeking(source, &checked, query, page)?;
        let (delivered, more, token) = if page.rows() == 0 {
            if query.count {
                let n = scalar(self.db, self.count_sql(source, &checked)?).await?;
                body.extend_from_slice(format!(",\"@odata.count\":{n}").as_bytes());
            }
            body.extend_from_slice(VALUE_OPEN);
            (0, false, None)
        } else {
            let read = Read {
                page,
                count: query.count,
                seeking: seeking.as_ref(),
            };
            self.rows(source, &checked, read, &mut body).await?
        };
        body.push(b']');
        let origin = &self.service.origin;
        let link = page.next_link(origin, &source.path, query, delivered, more, token);
        if let Some(link) = link {
            body.extend_from_slice(b",\"@odata.nextLink\":");
            write_str(&mut body, &link);
        }
        body.push(b'}');
        Ok(Reply::json(body))
    }

    /// How a collection page of `source` under `query` is read by position:
    /// `None` for a collection whose next links carry no `$skiptoken` (a
    /// navigation's, or one ordered by a value a token does not carry).
    /// 400 for a `$skiptoken` such a collection was sent, or one that does
    /// not open.
    fn seeking(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        query: &Query,
        page: Page,
    ) -> Result<Option<Seeking>, ODataError> {
        let types = order_types(checked, self.dialect())?;
        let seekable =
            source.restriction.is_none() && types.iter().all(|t| SkipTokens::seekable(*t));
        if !seekable {
            return match query.skiptoken {
                Some(_) => Err(QueryError::new(
                    "invalid_skiptoken",
                    "$skiptoken",
                    "this collection's next links carry no $skiptoken; page it with $skip",
                )
                .into()),
                None => Ok(None),
            };
        }
        let binding = SkipTokens::binding(&source.path, query);
        let position = match &query.skiptoken {
            Some(token) => Some(Position::After(
                self.service.tokens.open(&binding, token, &types)?,
            )),
            None if page.offset() == 0 => Some(Position::First),
            None => None,
        };
        Ok(Some(Seeking {
            position,
            types,
            binding,
        }))
    }

    /// Writes the count (when asked) and the page's entities as
    /// `,"@odata.count":n,"value":[…` onto `body`; answers how many entities
    /// were written, whether more rows remain, and the `$skiptoken` of the
    /// row after the page when it is read by position.
    async fn rows(
        &self,
        source: &Source<'m>,
        checked: &Checked<'m, '_>,
        read: Read<'_>,
        body: &mut Vec<u8>,
    ) -> Result<(u64, bool, Option<String>), ODataError> {
        let Read {
            page,
            count,
            seeking,
        } = read;
        let set = source.set;
        let expansions = checked.expand();
        let internal = admit(self, expansions)?;
        let selected = checked.selected();
        let order = seeking.map(|s| OrderValues {
            first: selected.len() + internal.len(),
            types: s.types.clone(),
        });
        let sought = seeking.is_some_and(|s| matches!(s.position, Some(Position::After(_))));
        // The page statement carries the count; alone it is needed only
        // for an empty page past the first row.
        let count = match count {
            true => Some(InlineCount {
                column: selected.len()
                    + internal.len()
                    + order.as_ref().map_or(0, |o| o.types.len()),
                alone: match page.offset() {
                    0 if !sought => None,
                    _ => Some(self.count_sql(source, checked)?),
                },
            }),
            false => None,
        };
        let fetch = Fetch {
            restriction: source.restriction.as_ref(),
            per_value: false,
            internal,
            page,
            scopes: Some(&self.scopes),
            count: count.is_some(),
        };
        let statements = match seeking {
            Some(seeking) => {
                seek_statements(checked, &fetch, seeking.position.as_ref(), self.dialect())?
            }
            None => vec![fetch_query(checked, &fetch, self.dialect())?],
        };
        let read = PageRead {
            statements,
            count,
            order,
        };
        let seal = |last: Option<Vec<Literal>>| {
            let seeking = seeking?;
            self.service
                .tokens
                .seal(&seeking.binding, &last?, &seeking.types)
        };
        let layout = Layout::new(selected, &set.key, internal_types(expansions), None);
        if expansions.is_empty() {
            let sink = BodySink {
                layout,
                body: std::mem::take(body),
                delivered: 0,
                opened: false,
            };
            let (mut sink, more, last) = run_page(self.db, read, page.rows(), sink).await?;
            sink.open();
            *body = sink.body;
            return Ok((sink.delivered, more, seal(last)));
        }
        let sink = EntitySink::new(layout);
        let (sink, more, last) = run_page(self.db, read, page.rows(), sink).await?;
        if let Some(n) = sink.count {
            body.extend_from_slice(format!(",\"@odata.count\":{n}").as_bytes());
        }
        body.extend_from_slice(VALUE_OPEN);
        let mut entities = sink.entities;
        attach(self, set, expansions, &mut entities).await?;
        for (i, entity) in entities.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(&entity.json);
            body.push(b'}');
        }
        Ok((entities.len() as u64, more, seal(last)))
    }

    /// The one entity of `source` (already restricted to a key), or 404.
    pub async fn entity(&self, source: &Source<'m>, query: &Query) -> Result<Reply, ODataError> {
        let set = source.set;
        let checked = self.check(set, query)?;
        let mut body = Vec::new();
        let read = Read {
            page: Page::first(1),
            count: false,
            seeking: None,
        };
        let (found, _, _) = self.rows(source, &checked, read, &mut body).await?;
        if found == 0 {
            return Err(ODataError::not_found(format!(
                "no such entity in {}",
                set.name
            )));
        }
        let mut out = Vec::with_capacity(body.len() + 128);
        out.extend_from_slice(b"{\"@odata.context\":");
        let fragment = format!("{}/$entity", context_fragment(&set.name, query));
        write_str(&mut out, &self.context(&fragment));
        out.push(b',');
        // `,"value":[{` then the entity's properties.
        let properties = body.strip_prefix(VALUE_OPEN).unwrap_or(&body);
        out.extend_from_slice(properties.get(1..).unwrap_or_default());
        Ok(Reply::json(out))
    }

    /// The plain-text count of `source` under `query`'s filter and search.
    pub async fn count(&self, source: &Source<'m>, query: &Query) -> Result<Reply, ODataError> {
        let checked = self.check(source.set, query)?;
        let n = scalar(self.db, self.count_sql(source, &checked)?).await?;
        let mut reply = Reply::json(n.to_string().into_bytes());
        reply.content_type = rocket::http::ContentType::Plain;
        Ok(reply)
    }

    /// The statement counting the rows of `source` that `checked`'s filter
    /// and search admit, under the caller's scope.
    fn count_sql(&self, source: &Source<'m>, checked: &Checked<'m, '_>) -> Result<Sql, ODataError> {
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

    /// `query` checked against `set` alone, before any statement runs: a
    /// request whose options are wrong is 400 whatever the data.
    pub fn validate(&self, set: &'m EntitySet, query: &Query) -> Result<(), ODataError> {
        self.check(set, query).map(drop)
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
        let layout = Layout::new(checked.selected(), &set.key, types, None);
        let sink = EntitySink::new(layout);
        let (sink, _) = run(self.db, sql, 1, sink).await?;
        let found = sink.entities.into_iter().next();
        Ok(found)
    }
}

/// How one page is read: its slice, whether it carries the count, and
/// whether it is read by position.
struct Read<'s> {
    page: Page,
    count: bool,
    seeking: Option<&'s Seeking>,
}

/// A collection page read by position ([`Ctx::seeking`]).
struct Seeking {
    /// Where the page starts; `None` past `$skip` rows (a link without a
    /// `$skiptoken`), still selecting the order's values for the next link.
    position: Option<Position>,
    /// The types of the order's terms.
    types: Vec<EdmType>,
    /// What the page's tokens are bound to.
    binding: String,
}

/// `Set` or `Set(a,b)` with the `$select` list as sent.
fn context_fragment(set: &str, query: &Query) -> String {
    match &query.select {
        Some(select) => format!("{set}({select})"),
        None => set.to_owned(),
    }
}
