//! The Worker's decoding: the runtime's own WHATWG `TextDecoder`, which carries
//! the tables for every legacy charset mail-parser hands here (checked on
//! workerd for each of them, decision 0025), so the Worker carries none.
//!
//! It is asked with `fatal` off, its default, so a malformed byte becomes
//! U+FFFD as in encoding_rs; the byte-order mark was already looked at by the
//! caller, and the decoder drops one UTF-8 or UTF-16 mark as encoding_rs does.

use wasm_bindgen::prelude::*;

use crate::Charset;

#[wasm_bindgen]
extern "C" {
    /// The runtime's `TextDecoder`, declared here rather than through web-sys,
    /// for the two members this module calls.
    type TextDecoder;

    /// Throws a RangeError for a label the runtime does not know.
    #[wasm_bindgen(constructor, catch)]
    fn new(label: &str) -> Result<TextDecoder, JsValue>;

    /// The bytes are handed over as a view of the Worker's memory, not copied.
    #[wasm_bindgen(method)]
    fn decode(this: &TextDecoder, bytes: &[u8]) -> String;
}

/// The whole of `bytes` decoded as `charset`.
pub(crate) fn decode_whole(charset: Charset, bytes: &[u8]) -> String {
    match TextDecoder::new(charset.whatwg_name()) {
        Ok(decoder) => decoder.decode(bytes),
        // A runtime without this charset: the text is lost, as encoding_rs
        // loses it for a charset it has no decoder for (its `replacement`),
        // rather than shown as the bytes read as something else.
        Err(_) if bytes.is_empty() => String::new(),
        Err(_) => char::REPLACEMENT_CHARACTER.to_string(),
    }
}
