//! Loading a request's session: its row by the cookie, expiry, the device
//! binding's bound cookie, and a recall by a remember-me cookie when no
//! session is signed in.

use std::sync::{Arc, Mutex};

use rocket::request::Request;
use serde_json::Map;

use super::bound::{self, Bound};
use super::{device, remember, store, Payload, RecallNotice, Session, SignedInBy, State};
use crate::clock::unix_now;
use crate::db::DbError;
use crate::domain::sha256_hex;
use crate::security::ClientIp;
use crate::shared::Shared;

/// How stale `last_activity` may get before a request writes it back: at most
/// [`super::TOUCH_INTERVAL`], and a sixtieth of the idle lifetime, so a
/// session in use never expires early by more than that (a 1-minute idle
/// lifetime would otherwise end a session used every 45 s).
fn touch_after(idle_seconds: i64) -> i64 {
    (idle_seconds / 60).clamp(1, super::TOUCH_INTERVAL)
}

/// The session of `req`: see [`Session::of`].
pub(super) async fn load(req: &Request<'_>, gh: &Shared) -> Result<Session, DbError> {
    let now = unix_now();
    let session = &gh.settings.session;
    let mut state = State {
        ip: ClientIp::of(req, &gh.settings).to_string(),
        user_agent: req
            .headers()
            .get_one("User-Agent")
            .map(|ua| ua.chars().take(512).collect()),
        payload: Payload {
            created_at: now,
            data: Map::new(),
        },
        ..State::default()
    };
    if let Some(id) = req
        .cookies()
        .get(&super::session_cookie_name(&gh.settings))
        .map(|c| c.value().to_owned())
    {
        if let Some(found) = store::find(&gh.db, &sha256_hex(&id)).await? {
            let payload: Payload = serde_json::from_str(&found.payload).unwrap_or_default();
            let idle_seconds = i64::from(session.idle_minutes) * 60;
            let idle_ok = now - found.last_activity < idle_seconds;
            let absolute_ok = now - payload.created_at < i64::from(session.absolute_hours) * 3600;
            if !(idle_ok && absolute_ok) {
                // Expired: the row goes, the client gets a new id if anything is stored.
                store::delete(&gh.db, &sha256_hex(&id)).await?;
            } else {
                state.named = found.binding.clone().map(|b| (b, found.user_id));
                // A bound session without a live bound cookie is a guest's
                // request, and its row stays as it is.
                if let Some(bound) = proven(req, gh, found.binding, now) {
                    state.touch = now - found.last_activity >= touch_after(idle_seconds);
                    state.id = Some(id);
                    state.user_id = found.user_id;
                    state.payload = payload;
                    state.bound = bound;
                }
            }
        }
    }
    let handle = Session(Arc::new(Mutex::new(state)));
    if handle.user_id().is_some() {
        return Ok(handle);
    }
    let recall = remember::recall(req, gh, None).await?;
    recalled(&handle, req, gh, recall).await;
    Ok(handle)
}

/// What a session row's `binding` lets `req` be: `Some(None)` for an
/// unbound session, `Some(Some(_))` for a bound one with a live bound
/// cookie minted for it, `None` for a bound one without.
fn proven(
    req: &Request<'_>,
    gh: &Shared,
    binding: Option<bound::Binding>,
    now: i64,
) -> Option<Option<Bound>> {
    let Some(binding) = binding else {
        return Some(None);
    };
    let minted_at = bound::cookie::minted(req.cookies(), &gh.settings, &binding.id)?;
    let lifetime = i64::from(gh.settings.session.bound_cookie_minutes) * 60;
    (minted_at <= now && now - minted_at < lifetime).then_some(Some(Bound { binding, minted_at }))
}

/// Signs `handle` in through a refresh proven by the key of the DBSC
/// session `id`, whose remember-me record `req` presents: `true` when it
/// did (the new session keeps the binding).
pub(super) async fn recall_bound(
    handle: &Session,
    req: &Request<'_>,
    gh: &Shared,
    id: &str,
) -> Result<bool, DbError> {
    let recall = remember::recall(req, gh, Some(id)).await?;
    Ok(recalled(handle, req, gh, recall).await)
}

/// Applies what a recall found to `handle`: `true` when it signed in.
async fn recalled(
    handle: &Session,
    req: &Request<'_>,
    gh: &Shared,
    recall: remember::Recall,
) -> bool {
    match recall {
        remember::Recall::Nothing => false,
        remember::Recall::SignIn {
            user_id,
            selector,
            rotated,
            binding,
        } => {
            handle.sign_in(user_id);
            handle.signed_in_by(SignedInBy {
                remember: Some(selector),
                passkey: None,
            });
            handle.lock().carried = binding;
            // The rotating recall is the browser's sign-in; its parallel
            // requests within the grace are the same browser.
            if rotated {
                match device::signed_in_on(req.cookies(), gh, user_id).await {
                    Ok(device::Device::New) => {
                        handle.lock().notices.push(RecallNotice::NewDevice { user_id });
                    }
                    Ok(device::Device::Known) => {}
                    Err(e) => tracing::warn!(error = %e, "recall's device not recorded"),
                }
            }
            true
        }
        remember::Recall::Theft { user_id } => {
            handle.lock().notices.push(RecallNotice::Theft { user_id });
            false
        }
    }
}
