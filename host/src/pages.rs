//! The reference host's own pages.

use html_escape::encode_text;
use rocket::get;
use rocket::response::content::RawHtml;

use gatehouse::AuthUser;

fn page(title: &str, body: &str) -> RawHtml<String> {
    RawHtml(format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>\n"
    ))
}

/// `/`: public landing page.
#[get("/")]
pub fn home() -> RawHtml<String> {
    page(
        "Gatehouse",
        "<p><a href=\"/login\">Sign in</a> · <a href=\"/dashboard\">Dashboard</a></p>",
    )
}

/// `/dashboard`: who is signed in, a link to their account screen (password,
/// two-factor sign-in, sessions) and a sign-out button.
#[get("/dashboard")]
pub fn dashboard(user: AuthUser) -> RawHtml<String> {
    page(
        "Dashboard",
        &format!(
            "<p>Signed in as <strong id=\"user-name\">{}</strong> (<span id=\"user-email\">{}</span>).</p>\
             <p><a href=\"/account\">Your account</a></p>\
             <form method=\"post\" action=\"/logout\"><button type=\"submit\">Sign out</button></form>",
            encode_text(&user.name),
            encode_text(&user.email)
        ),
    )
}

/// `/terms`.
#[get("/terms")]
pub fn terms() -> RawHtml<String> {
    page("Terms of service", "<p>Use this service lawfully.</p>")
}

/// `/privacy`.
#[get("/privacy")]
pub fn privacy() -> RawHtml<String> {
    page(
        "Privacy",
        "<p>We keep your name, address and organisation to sign you in.</p>",
    )
}

/// `/cookies`.
#[get("/cookies")]
pub fn cookies() -> RawHtml<String> {
    page(
        "Cookies",
        "<p>One session cookie, and a remember-me cookie if you ask for it.</p>",
    )
}
