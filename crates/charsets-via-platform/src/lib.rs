//! Mailroom's stand-in for `encoding_rs` 0.8, patched under mail-parser
//! (decision 0025): the legacy charsets of received mail (Shift_JIS, ISO-2022-JP,
//! EUC-JP, EUC-KR, GBK, GB18030, Big5 and a few single-byte ones) decoded by
//! whoever already has the WHATWG tables, not by tables compiled into the Worker.
//!
//! It owns exactly the surface mail-parser's `full_encoding` feature calls (the
//! statics below, `Encoding::new_decoder` and `Decoder::decode_to_string`) and
//! keeps encoding_rs's meaning for it: a byte-order mark at the start turns the
//! decoder into UTF-8 or UTF-16 (encoding_rs's BOM sniffing), malformed bytes
//! become U+FFFD, and the `replacement` encoding turns any input into one
//! U+FFFD. Everything else of encoding_rs is absent on purpose: a caller that
//! needs more should fail to compile, not get a guess.
//!
//! Where the bytes are decoded is the only thing that differs by target: in the
//! Worker by the runtime's `TextDecoder` (`text_decoder`), natively by
//! encoding_rs 0.7 (`reference_decoders`), so the native tests decode for real.

#[cfg(not(target_arch = "wasm32"))]
mod reference_decoders;
#[cfg(target_arch = "wasm32")]
mod text_decoder;

#[cfg(not(target_arch = "wasm32"))]
use reference_decoders::decode_whole;
#[cfg(target_arch = "wasm32")]
use text_decoder::decode_whole;

/// What the bytes are decoded as. The last three are reached only through a
/// byte-order mark, as encoding_rs's `new_decoder` reaches them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Charset {
    Big5,
    EucJp,
    EucKr,
    Gb18030,
    Gbk,
    Ibm866,
    Iso2022Jp,
    Replacement,
    ShiftJis,
    Windows874,
    XMacCyrillic,
    XUserDefined,
    Utf8,
    Utf16LittleEndian,
    Utf16BigEndian,
}

impl Charset {
    /// The encoding's WHATWG name, which is also one of its labels: what the
    /// runtime's `TextDecoder` is asked for.
    fn whatwg_name(self) -> &'static str {
        match self {
            Charset::Big5 => "Big5",
            Charset::EucJp => "EUC-JP",
            Charset::EucKr => "EUC-KR",
            Charset::Gb18030 => "gb18030",
            Charset::Gbk => "GBK",
            Charset::Ibm866 => "IBM866",
            Charset::Iso2022Jp => "ISO-2022-JP",
            Charset::Replacement => "replacement",
            Charset::ShiftJis => "Shift_JIS",
            Charset::Windows874 => "windows-874",
            Charset::XMacCyrillic => "x-mac-cyrillic",
            Charset::XUserDefined => "x-user-defined",
            Charset::Utf8 => "UTF-8",
            Charset::Utf16LittleEndian => "UTF-16LE",
            Charset::Utf16BigEndian => "UTF-16BE",
        }
    }
}

/// A character encoding, as encoding_rs names one: only ever used through the
/// `&'static` statics below.
#[derive(Debug, PartialEq, Eq)]
pub struct Encoding {
    charset: Charset,
}

impl Encoding {
    /// The encoding's WHATWG name, as encoding_rs's `name` gives it.
    pub fn name(&'static self) -> &'static str {
        self.charset.whatwg_name()
    }

    /// A decoder with BOM sniffing, as encoding_rs's `new_decoder` gives one:
    /// a UTF-8 or UTF-16 byte-order mark at the start of the input wins over
    /// this encoding.
    pub fn new_decoder(&'static self) -> Decoder {
        Decoder { encoding: self, held_back: Vec::new() }
    }
}

pub static BIG5: &Encoding = &Encoding { charset: Charset::Big5 };
pub static EUC_JP: &Encoding = &Encoding { charset: Charset::EucJp };
pub static EUC_KR: &Encoding = &Encoding { charset: Charset::EucKr };
pub static GB18030: &Encoding = &Encoding { charset: Charset::Gb18030 };
pub static GBK: &Encoding = &Encoding { charset: Charset::Gbk };
pub static IBM866: &Encoding = &Encoding { charset: Charset::Ibm866 };
pub static ISO_2022_JP: &Encoding = &Encoding { charset: Charset::Iso2022Jp };
pub static REPLACEMENT: &Encoding = &Encoding { charset: Charset::Replacement };
pub static SHIFT_JIS: &Encoding = &Encoding { charset: Charset::ShiftJis };
pub static WINDOWS_874: &Encoding = &Encoding { charset: Charset::Windows874 };
pub static X_MAC_CYRILLIC: &Encoding = &Encoding { charset: Charset::XMacCyrillic };
pub static X_USER_DEFINED: &Encoding = &Encoding { charset: Charset::XUserDefined };

/// Why a `decode_to_string` call returned, as encoding_rs says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoderResult {
    /// All the input was taken.
    InputEmpty,
    /// The output had no room left. This decoder never says it: it grows the
    /// `String` instead (see `Decoder::decode_to_string`).
    OutputFull,
}

/// A decoder for one stream of bytes in one encoding.
#[derive(Debug)]
pub struct Decoder {
    encoding: &'static Encoding,
    /// Input given before the last call. The runtime decodes a whole buffer at
    /// a time, so a stream is decoded once its end is known.
    held_back: Vec<u8>,
}

impl Decoder {
    /// Decodes `source` and appends the text to `destination`, as encoding_rs's
    /// `decode_to_string` does, with two differences a caller that loops on
    /// the result does not notice: the `String` grows to fit, so the answer is
    /// always `InputEmpty` with all of `source` read; and input before the call
    /// with `last` set is held back and decoded with it. The third value says
    /// whether the text holds U+FFFD, which a malformed byte becomes but which
    /// a sender may also have written (the runtime does not tell them apart;
    /// mail-parser does not read it).
    pub fn decode_to_string(
        &mut self,
        source: &[u8],
        destination: &mut String,
        last: bool,
    ) -> (CoderResult, usize, bool) {
        if !last {
            self.held_back.extend_from_slice(source);
            return (CoderResult::InputEmpty, source.len(), false);
        }
        let text = if self.held_back.is_empty() {
            decode(self.encoding.charset, source)
        } else {
            let mut whole = std::mem::take(&mut self.held_back);
            whole.extend_from_slice(source);
            decode(self.encoding.charset, &whole)
        };
        destination.push_str(&text);
        (CoderResult::InputEmpty, source.len(), text.contains(char::REPLACEMENT_CHARACTER))
    }
}

/// The whole of `bytes` as text, with encoding_rs's BOM sniffing and its
/// `replacement` encoding, which no runtime decoder offers: the `TextDecoder`
/// constructor refuses the label.
fn decode(declared: Charset, bytes: &[u8]) -> String {
    match sniff_byte_order_mark(bytes).unwrap_or(declared) {
        Charset::Replacement if bytes.is_empty() => String::new(),
        Charset::Replacement => char::REPLACEMENT_CHARACTER.to_string(),
        // The mark is left in: both decoders drop one UTF-8 or UTF-16 mark and
        // no more, so a second one stays in the text as encoding_rs keeps it.
        charset => decode_whole(charset, bytes),
    }
}

/// The charset a byte-order mark at the start of `bytes` names, if any.
fn sniff_byte_order_mark(bytes: &[u8]) -> Option<Charset> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        Some(Charset::Utf8)
    } else if bytes.starts_with(b"\xFF\xFE") {
        Some(Charset::Utf16LittleEndian)
    } else if bytes.starts_with(b"\xFE\xFF") {
        Some(Charset::Utf16BigEndian)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
