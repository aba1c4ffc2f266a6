//! The simulator's answers: JSON bodies, and errors in the service's form
//! `{"error": {"code", "message"}}`.

use super::json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A 4xx answer with the `{"error": {"code", "message"}}` body.
pub(super) struct ApiError(pub(super) StatusCode, pub(super) &'static str, pub(super) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = Vec::new();
        body.extend_from_slice(b"{\"error\":{\"code\":");
        json::push_str(&mut body, self.1);
        body.extend_from_slice(b",\"message\":");
        json::push_str(&mut body, &self.2);
        body.extend_from_slice(b"}}");
        (self.0, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

/// 400 `invalid_parameter`.
pub(super) fn bad(msg: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_parameter", msg.into())
}

/// A path the service does not have: 404 with its own code, distinct
/// from `not_found` (a missing token or block), as a real service answers
/// a wrong base URL path.
pub(super) async fn not_found() -> ApiError {
    ApiError(StatusCode::NOT_FOUND, "no_route", "no such route".into())
}

/// A 200 with a JSON body already rendered.
pub(super) fn ok_json(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A 200 with `v` as JSON.
pub(super) fn json_response(v: &impl serde::Serialize) -> Response {
    let body = serde_json::to_vec(v).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
