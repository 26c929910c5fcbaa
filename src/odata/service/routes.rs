//! The `/odata` routes: GET of every resource, and `POST /odata/$batch`.

use rocket::data::Data;
use rocket::http::uri::{fmt::Path, Segments};
use rocket::http::ContentType;
use rocket::{get, post, routes, Route};

use super::batch::Answers;
use super::read::{answer, Incoming};
use super::reply::Reply;
use crate::odata::plan::error::ODataError;
use crate::security::SameOrigin;

/// Every `/odata` route, as the fairing mounts them.
pub fn all() -> Vec<Route> {
    routes![root, odata, batch]
}

/// `GET /odata` (the service document).
#[get("/odata")]
pub async fn root(incoming: Incoming<'_>) -> Result<Reply, ODataError> {
    answer(&[], incoming).await
}

/// `GET /odata/<path..>`: every OData resource.
#[get("/odata/<path..>")]
pub async fn odata(path: Segments<'_, Path>, incoming: Incoming<'_>) -> Result<Reply, ODataError> {
    let segments: Vec<&str> = path.collect();
    answer(&segments, incoming).await
}

/// `POST /odata/$batch`: the requests of a multipart or JSON batch, each
/// answered as if sent alone, in order.
#[post("/odata/$batch", data = "<body>")]
pub async fn batch<'r>(
    origin: Result<SameOrigin, &'static str>,
    content_type: Option<&ContentType>,
    incoming: Incoming<'r>,
    body: Data<'_>,
) -> Result<Answers<'r>, ODataError> {
    origin.map_err(|_| ODataError::cross_origin())?;
    Answers::read(content_type, incoming, body).await
}
