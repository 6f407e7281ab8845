//! A request's parameters read as ProtoJSON reads a message (A2A 1.0 §5.5):
//! each field by its JSON name (`pageSize`) or its proto name (`page_size`),
//! null as absent, a 32-bit integer as a number or its decimal text. A field
//! the message does not have is ignored (§5.7: so that a newer client's fields
//! do not break an older server); one sent under both its names is refused,
//! as it cannot be told which is meant. 0.3 requests are read the same way.

use serde_json::{Map, Value};

use super::rpc::RpcError;

/// The fields of one request object, checked against the names its type has.
pub struct Fields<'a> {
    object: &'a Map<String, Value>,
    /// Where the object is, from `params` (`params.message.`), for naming a field.
    at: String,
}

/// `page_size` as `pageSize`: ProtoJSON's JSON name of a proto field.
fn json_name(name: &str) -> String {
    let mut named = String::with_capacity(name.len());
    let mut upper = false;
    for character in name.chars() {
        if character == '_' {
            upper = true;
        } else if upper {
            named.extend(character.to_uppercase());
            upper = false;
        } else {
            named.push(character);
        }
    }
    named
}

/// `pageSize` as `page_size`: the proto name of a JSON name.
fn proto_name(name: &str) -> String {
    let mut named = String::with_capacity(name.len() + 4);
    for character in name.chars() {
        if character.is_ascii_uppercase() {
            named.push('_');
            named.push(character.to_ascii_lowercase());
        } else {
            named.push(character);
        }
    }
    named
}

impl<'a> Fields<'a> {
    /// The fields of `object`, which is at `at` (`params.message.`) in the request.
    pub fn read(object: &'a Map<String, Value>, at: &str) -> Result<Fields<'a>, RpcError> {
        for key in object.keys() {
            let name = json_name(key);
            if name != *key && object.contains_key(&name) {
                return Err(RpcError::invalid(
                    format!("{at}{name}"),
                    format!("`{at}{name}` is sent twice, as `{name}` and as `{key}`: send it once."),
                ));
            }
        }
        Ok(Fields { object, at: at.to_string() })
    }

    /// The path of the field `name` from `params`, for an error.
    pub fn path(&self, name: &str) -> String {
        format!("{}{name}", self.at)
    }

    /// The field `name` (a JSON name), if it was sent and is not null.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.object.get(name).or_else(|| self.object.get(&proto_name(name))).filter(|value| !value.is_null())
    }

    /// A string field.
    pub fn text(&self, name: &str) -> Result<Option<&'a str>, RpcError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(RpcError::invalid(self.path(name), format!("`{}` must be a string.", self.path(name)))),
        }
    }

    /// A string field the request must carry, not empty.
    pub fn required_text(&self, name: &str) -> Result<&'a str, RpcError> {
        self.text(name)?
            .filter(|text| !text.is_empty())
            .ok_or_else(|| RpcError::invalid(self.path(name), format!("`{}` is required.", self.path(name))))
    }

    /// A whole number from `minimum` to `maximum`, as a number or its decimal text.
    pub fn integer(&self, name: &str, minimum: i64, maximum: i64) -> Result<Option<i64>, RpcError> {
        let Some(value) = self.get(name) else { return Ok(None) };
        let number = match value {
            Value::Number(number) => number.as_i64(),
            Value::String(text) => text.parse::<i64>().ok(),
            _ => None,
        };
        match number {
            Some(number) if (minimum..=maximum).contains(&number) => Ok(Some(number)),
            _ => Err(RpcError::invalid(
                self.path(name),
                format!("`{}` must be a whole number from {minimum} to {maximum}.", self.path(name)),
            )),
        }
    }

    /// A boolean field.
    pub fn boolean(&self, name: &str) -> Result<Option<bool>, RpcError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(_) => Err(RpcError::invalid(self.path(name), format!("`{}` must be true or false.", self.path(name)))),
        }
    }

    /// An object field.
    pub fn object(&self, name: &str) -> Result<Option<&'a Map<String, Value>>, RpcError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Object(object)) => Ok(Some(object)),
            Some(_) => Err(RpcError::invalid(self.path(name), format!("`{}` must be an object.", self.path(name)))),
        }
    }

    /// A list field.
    pub fn list(&self, name: &str) -> Result<Option<&'a Vec<Value>>, RpcError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Array(list)) => Ok(Some(list)),
            Some(_) => Err(RpcError::invalid(self.path(name), format!("`{}` must be a list.", self.path(name)))),
        }
    }

    /// The `tenant` every 1.0 request may carry: this node's interfaces name
    /// none, so only an empty one is taken.
    pub fn no_tenant(&self) -> Result<(), RpcError> {
        match self.text("tenant")? {
            None | Some("") => Ok(()),
            Some(_) => Err(RpcError::invalid(
                self.path("tenant"),
                format!(
                    "`{}` names a tenant, and this endpoint has none (its card names none): leave it out.",
                    self.path("tenant")
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_field_is_read_by_either_name_an_unknown_one_ignored_and_one_sent_twice_refused() {
        let object = json!({ "page_size": 2, "contextId": "cnv_1", "historyLength": "3", "sortBy": "name" });
        let fields = Fields::read(object.as_object().unwrap(), "params.").ok().unwrap();
        assert_eq!(fields.integer("pageSize", 1, 100).ok().flatten(), Some(2));
        assert_eq!(fields.integer("historyLength", 0, 100).ok().flatten(), Some(3));
        assert_eq!(fields.text("contextId").ok().flatten(), Some("cnv_1"));
        let twice = json!({ "pageSize": 2, "page_size": 3 });
        let refused = Fields::read(twice.as_object().unwrap(), "params.");
        assert_eq!(refused.err().and_then(|error| error.field), Some("params.pageSize".to_string()));
    }

    #[test]
    fn names_convert_both_ways() {
        assert_eq!(json_name("status_timestamp_after"), "statusTimestampAfter");
        assert_eq!(proto_name("statusTimestampAfter"), "status_timestamp_after");
        assert_eq!(json_name("id"), "id");
    }
}
