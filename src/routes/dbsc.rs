//! Device-bound sessions (DBSC): `POST /auth/dbsc/register` and
//! `POST /auth/dbsc/refresh`, as DESIGN.md's section says. What a proof
//! must be is `session::bound::proof`'s; here it is asked for, judged
//! against the session or the remember-me record it is for, and answered.
//!
//! Every refusal counts against the client IP's budget (the sign-in's
//! `auth.ip_throttle_attempts` per window) and is one
//! `dbsc_proof_refused` event; its reason goes to the log, the proof never.

use rocket::http::{ContentType, CookieJar, Header, Status};
use rocket::request::{FromRequest, Outcome, Request};
use rocket::response::{self, Responder};
use rocket::serde::json::Json;
use rocket::{post, State};
use serde_json::{json, Value};

use crate::auth::once;
use crate::clock::unix_now;
use crate::db::DbError;
use crate::error::AuthError;
use crate::events::{AuthEvent, Origin};
use crate::domain::challenge::{Purpose, CHALLENGE_SECONDS};
use crate::security::{ClientIp, SameOrigin};
use crate::session::bound::{self, cookie, headers, proof, Binding};
use crate::session::{remembered_binding, Session};
use crate::state::GatehouseState;

/// The scope under which a used challenge is claimed.
const CLAIM_SCOPE: &str = "dbsc_challenge";
/// Why a proof over a challenge [`first_use`] refused is refused.
const NOT_FIRST_USE: &str = "challenge not issued to this session, used or expired";

/// The DBSC headers of a request: the proof and the session it is for.
pub struct Presented {
    proof: Option<String>,
    session_id: Option<String>,
}

impl Presented {
    fn of(req: &Request<'_>) -> Self {
        let header = |name: &str| req.headers().get_one(name);
        let proof = header(headers::RESPONSE)
            .or_else(|| header(headers::RESPONSE_OLD))
            .filter(|value| value.len() <= proof::MAX_PROOF_BYTES)
            .and_then(headers::string_item);
        let session_id = header(headers::SESSION_ID)
            .filter(|value| value.len() <= 128)
            .and_then(headers::string_item);
        Self { proof, session_id }
    }
}

/// What both DBSC routes take of a request: its session, its DBSC headers,
/// the client (for the budget and events), its cookies, and the request
/// itself for the recall a refresh may make.
pub struct Asked<'r> {
    session: Session,
    presented: Presented,
    client: ClientIp,
    from: Origin,
    jar: &'r CookieJar<'r>,
    request: &'r Request<'r>,
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Asked<'r> {
    type Error = AuthError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let session = rocket::outcome::try_outcome!(req.guard::<Session>().await);
        // These two always succeed.
        let (Some(client), Some(from)) = (
            req.guard::<ClientIp>().await.succeeded(),
            req.guard::<Origin>().await.succeeded(),
        ) else {
            return Outcome::Error((Status::InternalServerError, AuthError::Unavailable));
        };
        Outcome::Success(Self {
            session,
            presented: Presented::of(req),
            client,
            from,
            jar: req.cookies(),
            request: req,
        })
    }
}

/// What the DBSC routes answer.
pub enum Answer {
    /// 200, the session instructions JSON.
    Instructions(Value),
    /// 403 with `Secure-Session-Challenge`: prove the key over this.
    Challenge(String),
    /// 200 `{"continue": false}`: the session has ended; the browser
    /// forgets it.
    End,
}

impl<'r> Responder<'r, 'static> for Answer {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let (status, body, challenge) = match self {
            Self::Instructions(body) => (Status::Ok, body, None),
            Self::Challenge(value) => (
                Status::Forbidden,
                json!({"message": "device_proof_required"}),
                Some(value),
            ),
            Self::End => (Status::Ok, json!({"continue": false}), None),
        };
        let mut response = response::Response::build_from(Json(body).respond_to(req)?)
            .status(status)
            .header(ContentType::JSON)
            .header(Header::new("Cache-Control", "no-store"))
            .finalize();
        if let Some(value) = challenge {
            response.set_raw_header(headers::CHALLENGE, value);
        }
        Ok(response)
    }
}

/// Refuses a proof: counted against `client`'s budget, one event, the
/// reason logged.
async fn refused(
    gh: &GatehouseState,
    client: &ClientIp,
    from: &Origin,
    user_id: Option<i64>,
    reason: &str,
) -> Result<Answer, AuthError> {
    tracing::info!(reason, "device-bound session proof refused");
    let budget = &gh.throttles.dbsc_ip;
    budget.record(&budget.ip_key(&client.to_string())).await?;
    gh.events
        .emit(AuthEvent::DbscProofRefused { user_id }, from)
        .await;
    Err(AuthError::DeviceProofRefused)
}

/// 429 while `client`'s budget of refused proofs is spent.
async fn within_budget(gh: &GatehouseState, client: &ClientIp) -> Result<(), AuthError> {
    let budget = &gh.throttles.dbsc_ip;
    match budget.refuses(&budget.ip_key(&client.to_string())).await? {
        Some(retry_after) => Err(AuthError::Throttled { retry_after }),
        None => Ok(()),
    }
}

/// Whether `challenge` was issued for `purpose` to `owner` under five
/// minutes ago and is used now for the first time, on any instance.
async fn first_use(
    gh: &GatehouseState,
    purpose: Purpose,
    owner: &str,
    challenge: &str,
) -> Result<bool, DbError> {
    let Some(issued) = gh.dbsc.open(purpose, owner, challenge, unix_now()) else {
        return Ok(false);
    };
    once::claim(&gh.db, CLAIM_SCOPE, challenge, issued + CHALLENGE_SECONDS).await
}

/// `POST /auth/dbsc/register`: binds the caller's signed-in session to the
/// key that signed the proof, and mints the bound cookie.
#[post("/auth/dbsc/register")]
pub async fn register(
    _same_origin: SameOrigin,
    asked: Asked<'_>,
    gh: &State<GatehouseState>,
) -> Result<Answer, AuthError> {
    let Asked {
        session,
        presented,
        client,
        from,
        jar,
        ..
    } = asked;
    if !gh.settings.session.device_binding {
        return Err(AuthError::NotFound);
    }
    within_budget(gh, &client).await?;
    let user_id = session.user_id().ok_or(AuthError::Unauthenticated)?;
    let (Some(owner), None) = (session.stored_id(), session.bound()) else {
        return refused(gh, &client, &from, Some(user_id), "session already bound").await;
    };
    let Some(token) = presented.proof else {
        return refused(gh, &client, &from, Some(user_id), "no proof").await;
    };
    let registered = match proof::registration(&token) {
        Ok(registered) => registered,
        Err(e) => return refused(gh, &client, &from, Some(user_id), &e.to_string()).await,
    };
    if !first_use(gh, Purpose::Register, &owner, &registered.challenge).await? {
        return refused(gh, &client, &from, Some(user_id), NOT_FIRST_USE).await;
    }
    let binding = Binding::new(registered.key);
    if !bound::store::bind(&gh.db, &owner, &binding).await? {
        return refused(gh, &client, &from, Some(user_id), "session gone or bound").await;
    }
    bound::store::bind_remembered(&gh.db, &owner, &binding).await?;
    let now = unix_now();
    cookie::mint(jar, &gh.settings, &binding.id, now);
    let instructions = bound::instructions(&gh.settings, &binding.id);
    session.set_bound(binding, now);
    gh.events
        .emit(AuthEvent::SessionBound { user_id }, &from)
        .await;
    Ok(Answer::Instructions(instructions))
}

/// What a refresh is for: the bound session this browser's session cookie
/// names, or the bound remember-me record its remember cookie names.
enum Source {
    Session { user_id: Option<i64> },
    Remembered,
}

/// The binding of the DBSC session `id` that this browser's cookies name:
/// the session its session cookie names (as loaded with the request), else
/// the remember-me record its remember cookie names.
async fn source(
    gh: &GatehouseState,
    session: &Session,
    jar: &CookieJar<'_>,
    id: &str,
) -> Result<Option<(Source, Binding)>, AuthError> {
    if let Some((binding, user_id)) = session.named_binding().filter(|(b, _)| b.id == id) {
        return Ok(Some((Source::Session { user_id }, binding)));
    }
    let remembered = remembered_binding(jar, gh).await?.filter(|b| b.id == id);
    Ok(remembered.map(|binding| (Source::Remembered, binding)))
}

/// `POST /auth/dbsc/refresh`: without a proof, 403 with a challenge; with
/// a proof by the session's key over it, a new bound cookie — and where
/// the browser kept only its bound remember-me cookie, a new session
/// recalled by it. `{"continue": false}` once the session has ended.
#[post("/auth/dbsc/refresh")]
pub async fn refresh(
    _same_origin: SameOrigin,
    asked: Asked<'_>,
    gh: &State<GatehouseState>,
) -> Result<Answer, AuthError> {
    let Asked {
        session,
        presented,
        client,
        from,
        jar,
        request,
    } = asked;
    within_budget(gh, &client).await?;
    let Some(id) = presented.session_id else {
        return Err(AuthError::Validation(crate::error::FieldErrors::single(
            headers::SESSION_ID,
            "required",
        )));
    };
    let Some((source, binding)) = source(gh, &session, jar, &id).await? else {
        return Ok(Answer::End);
    };
    let user_id = match source {
        Source::Session { user_id } => user_id,
        Source::Remembered => None,
    };
    let Some(token) = presented.proof else {
        let challenge = gh.dbsc.issue(Purpose::Refresh, &id, unix_now());
        let value = headers::challenge(&challenge, &id).ok_or(AuthError::MalformedBody)?;
        return Ok(Answer::Challenge(value));
    };
    let challenge = match proof::refresh(&token, &binding.key.jwk) {
        Ok(challenge) => challenge,
        Err(e) => return refused(gh, &client, &from, user_id, &e.to_string()).await,
    };
    if !first_use(gh, Purpose::Refresh, &id, &challenge).await? {
        return refused(gh, &client, &from, user_id, NOT_FIRST_USE).await;
    }
    if let Source::Remembered = source {
        if !session.recall_bound(request, gh, &id).await? {
            return Ok(Answer::End);
        }
    }
    let now = unix_now();
    cookie::mint(jar, &gh.settings, &id, now);
    if session.user_id().is_some() {
        session.set_bound(binding, now);
    }
    Ok(Answer::Instructions(bound::instructions(&gh.settings, &id)))
}
