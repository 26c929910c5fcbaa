//! Answering one GET below `/odata`: the service document, `$metadata`, a
//! collection, an entity, a count or a navigation. Every read takes this
//! path, sent alone ([`routes`](super::routes)) or inside a batch
//! ([`batch`](super::batch)).

use rocket::http::{ContentType, Status};
use rocket::request::{FromRequest, Outcome};
use rocket::Request;

use super::access;
use super::reply::Reply;
use super::rows::Numbers;
use super::run::run_plan;
use super::state::Service;
use crate::odata::check::paging::Page;
use crate::odata::check::scopes::Scopes;
use crate::odata::model::metadata::{metadata_xml, service_document};
use crate::odata::model::scope::Caller;
use crate::odata::model::sets::EntitySet;
use crate::odata::plan;
use crate::odata::plan::error::ODataError;
use crate::odata::query::options::{asks_ieee754, parse_query};
use crate::odata::query::path::{parse_resource, PathError, Resource, SetPath};
use crate::odata::query::syntax::{Format, Query};

/// What the handler needs from the request besides its path.
pub struct Incoming<'r> {
    pub(super) service: &'r Service,
    /// The raw (still percent-encoded) query string.
    pub(super) query: &'r str,
    /// Every `Prefer` header, joined.
    pub(super) prefer: Option<String>,
    /// How Int64 and Decimal values are written, as `Accept` or
    /// `Content-Type` asked.
    pub(super) numbers: Numbers,
    pub(super) caller: Result<Caller, ODataError>,
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Incoming<'r> {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let Some(service) = req.rocket().state::<Service>() else {
            return Outcome::Forward(Status::NotFound);
        };
        let prefer: Vec<&str> = req.headers().get("Prefer").collect();
        let media_types = req
            .headers()
            .get("Accept")
            .chain(req.headers().get("Content-Type"));
        Outcome::Success(Incoming {
            service,
            query: req.uri().query().map_or("", |q| q.as_str()),
            prefer: (!prefer.is_empty()).then(|| prefer.join(",")),
            numbers: numbers_of(media_types),
            caller: access::caller(req, service).await,
        })
    }
}

/// A collection (or its count) of the rows `$apply` makes of `set`: a
/// derived set over the aggregating statement, answered as any set is.
async fn aggregated(
    path: &SetPath,
    service: &Service,
    caller: Caller,
    set: &EntitySet,
    query: Query,
    page: Page,
    numbers: Numbers,
) -> Result<Reply, ODataError> {
    let scopes = Scopes::for_caller(&service.model, &caller);
    let over = service.ctx(set, caller.clone(), page, scopes, numbers);
    let (model, query) = plan::derived(&over.request, set, path, query)?;
    let derived = &model.sets[0];
    let scopes = Scopes::for_caller(&model, &caller);
    let ctx = service.ctx(set, caller, page, scopes, numbers);
    let mut checked = None;
    let plan = plan::plan(&ctx.request, derived, path, &query, &mut checked)?;
    run_plan(&ctx, plan).await
}

/// How Int64 and Decimal values are written, from the request's media types
/// (`Accept`, `Content-Type`).
pub(super) fn numbers_of<'h>(media_types: impl IntoIterator<Item = &'h str>) -> Numbers {
    if media_types.into_iter().any(asks_ieee754) {
        Numbers::Ieee754Compatible
    } else {
        Numbers::Json
    }
}

/// Answers a GET of the resource at `segments` (below `/odata`, decoded):
/// the one path every read takes, alone or inside a batch.
pub(super) async fn answer(segments: &[&str], incoming: Incoming<'_>) -> Result<Reply, ODataError> {
    let caller = incoming.caller.clone()?;
    let service = incoming.service;
    let visible = |set: &EntitySet| set.readable_by(&caller);
    let addressed = match parse_resource(segments) {
        // The set is resolved before its key: an unknown set is 404 and one
        // the caller may not read 401, whatever its key looks like.
        Err(PathError::InvalidKey { set, message }) => {
            readable_set(service, &set, &caller)?;
            return Err(ODataError::invalid_key(message));
        }
        parsed => parsed?,
    };
    match addressed {
        Resource::ServiceDocument => {
            readable(service.model.sets.iter().any(visible), &caller)?;
            let doc = service_document(&service.model, &service.origin, visible);
            Ok(Reply::json(doc.to_string().into_bytes()))
        }
        Resource::Metadata => {
            readable(service.model.sets.iter().any(visible), &caller)?;
            let mut reply = Reply::json(metadata_xml(&service.model, visible).into_bytes());
            reply.content_type = ContentType::XML;
            Ok(reply)
        }
        Resource::Set(path) => {
            // A set's name as declared, or `unknown`: a label holds no
            // text a caller made up.
            let set = service.model.find(&path.set).map_or("unknown", |s| &s.name);
            let kind = match (&path.key, &path.navigation) {
                _ if path.count => "count",
                (_, Some(_)) => "navigation",
                (Some(_), None) => "entity",
                (None, None) => "collection",
            };
            let answered = resource(path, &incoming, caller).await;
            let status = match &answered {
                Ok(reply) => reply.status.code,
                Err(e) => e.status.code,
            };
            service.metrics.odata(set, kind, status);
            answered
        }
    }
}

fn readable(any: bool, caller: &Caller) -> Result<(), ODataError> {
    if any {
        Ok(())
    } else {
        Err(ODataError::not_readable(caller))
    }
}

/// The entity set called `name`, if it exists (404) and `caller` may read it
/// (401).
fn readable_set<'s>(
    service: &'s Service,
    name: &str,
    caller: &Caller,
) -> Result<&'s EntitySet, ODataError> {
    let set = service
        .model
        .find(name)
        .ok_or_else(|| ODataError::not_found(format!("there is no entity set '{name}'")))?;
    readable(set.readable_by(caller), caller)?;
    Ok(set)
}

async fn resource(
    path: SetPath,
    incoming: &Incoming<'_>,
    caller: Caller,
) -> Result<Reply, ODataError> {
    let service = incoming.service;
    let set = readable_set(service, &path.set, &caller)?;
    let query = parse_query(incoming.query)?;
    let pagination = &service.pagination;
    let page = Page::from_prefer(
        incoming.prefer.as_deref(),
        pagination.default,
        pagination.max,
    );
    let numbers = match query.format {
        Some(Format::JsonIeee754) => Numbers::Ieee754Compatible,
        _ => incoming.numbers,
    };
    if query.apply.is_some() {
        let mut reply = aggregated(&path, service, caller, set, query, page, numbers).await?;
        reply.preference_applied = page.preference_applied();
        if numbers == Numbers::Ieee754Compatible {
            reply.say_ieee754_compatible();
        }
        return Ok(reply);
    }
    let scopes = Scopes::for_caller(&service.model, &caller);
    let ctx = service.ctx(set, caller, page, scopes, numbers);
    // Access, the path and the options are settled before any statement
    // runs: a wrong request is refused whatever the data.
    let mut checked = None;
    let plan = plan::plan(&ctx.request, set, &path, &query, &mut checked)?;
    let mut reply = run_plan(&ctx, plan).await?;
    reply.preference_applied = page.preference_applied();
    if numbers == Numbers::Ieee754Compatible {
        reply.say_ieee754_compatible();
    }
    Ok(reply)
}
