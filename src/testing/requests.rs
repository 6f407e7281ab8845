//! Test requests: `request` builds one to the test origin, and `RequestExt`
//! adds a body, a bearer credential or a header to it.

use serde_json::Value as Json;

use crate::core::http::Request;

use super::configuration::TEST_ORIGIN;

/// Builds a request to the test origin.
pub fn request(method: &str, path_and_query: &str) -> Request {
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        headers: Vec::new(),
        body: Vec::new(),
        origin: TEST_ORIGIN.to_string(),
        client_address: Some("192.0.2.1".to_string()),
    }
}

/// Builder conveniences for test requests.
pub trait RequestExt {
    fn json(self, body: Json) -> Request;
    fn raw_body(self, body: &[u8]) -> Request;
    fn bearer(self, token: &str) -> Request;
    fn header(self, name: &str, value: &str) -> Request;
}

impl RequestExt for Request {
    fn json(mut self, body: Json) -> Request {
        self.body = serde_json::to_vec(&body).expect("JSON serialises");
        self.headers.push(("content-type".into(), "application/json".into()));
        self
    }

    fn raw_body(mut self, body: &[u8]) -> Request {
        self.body = body.to_vec();
        self
    }

    fn bearer(mut self, token: &str) -> Request {
        self.headers.push(("authorization".into(), format!("Bearer {token}")));
        self
    }

    fn header(mut self, name: &str, value: &str) -> Request {
        self.headers.push((name.to_lowercase(), value.to_string()));
        self
    }
}
