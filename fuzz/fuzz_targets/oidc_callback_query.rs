//! Feeds arbitrary query strings to the OpenID callback's form
//! (`GET /auth/oidc/<name>/callback?<answer..>`), read into `Answer` as the
//! route does: the request URI's url-decoded query pairs, pushed leniently.
//! It must never panic and never fail (any query reaches the handler, which
//! refuses a bad answer itself); each of `code`, `state`, `iss` and `error`
//! is the decoded value of the one pair of that name (its first key, case
//! and all), none when sent twice or not at all, never longer than the query;
//! and the answer written back as a query string reads back the same.
#![no_main]

use gatehouse::routes::Answer;
use libfuzzer_sys::fuzz_target;
use rocket::form::name::NameView;
use rocket::form::{Form, ValueField};
use rocket::http::uri::Origin;

/// `Answer`'s fields in its order; its `Debug` is the real one's when both
/// hold the same values (the real one's fields are private).
mod expected {
    #[derive(Debug)]
    pub struct Answer<'r> {
        pub code: Option<&'r str>,
        pub state: Option<&'r str>,
        pub iss: Option<&'r str>,
        pub error: Option<&'r str>,
    }
}

const PATH: &str = "/auth/oidc/p/callback";

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    // As Rocket makes a request's URI from the path and query hyper read.
    let uri = Origin::new(PATH, Some(raw));
    let Some(query) = uri.query() else {
        return;
    };
    let pairs: Vec<(&str, &str)> = query.segments().collect();
    let answer = read(&pairs);

    let only = |field: &str| {
        let mut sent = pairs
            .iter()
            .filter(|(name, _)| NameView::new(*name).key_lossy().as_str() == field)
            .map(|(_, value)| *value);
        match (sent.next(), sent.next()) {
            (Some(value), None) => Some(value),
            _ => None,
        }
    };
    let want = expected::Answer {
        code: only("code"),
        state: only("state"),
        iss: only("iss"),
        error: only("error"),
    };
    assert_eq!(format!("{answer:?}"), format!("{want:?}"), "query: {raw:?}");
    for value in [want.code, want.state, want.iss, want.error]
        .into_iter()
        .flatten()
    {
        assert!(value.len() <= raw.len());
    }

    // Written back as the provider would write it, it reads the same.
    let written: Vec<String> = [
        ("code", want.code),
        ("state", want.state),
        ("iss", want.iss),
        ("error", want.error),
    ]
    .into_iter()
    .filter_map(|(name, value)| {
        value.map(|v| {
            format!(
                "{name}={}",
                url::form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>()
            )
        })
    })
    .collect();
    let written = written.join("&");
    let again_uri = Origin::new(PATH, Some(written.as_str()));
    let again_pairs: Vec<(&str, &str)> = again_uri
        .query()
        .map(|q| q.segments().collect())
        .unwrap_or_default();
    let again = read(&again_pairs);
    assert_eq!(
        format!("{again:?}"),
        format!("{answer:?}"),
        "written: {written:?}"
    );
});

/// The pairs read into `Answer` as the route's `?<answer..>` does: every
/// pair pushed unshifted, lenient, and finalized; it never fails.
fn read<'r>(pairs: &[(&'r str, &'r str)]) -> Answer<'r> {
    Form::<Answer<'r>>::parse_iter(pairs.iter().copied().map(ValueField::from))
        .unwrap_or_else(|e| panic!("refused: {e:?}"))
}
