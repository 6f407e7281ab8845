//! Native decoding, for the tests: encoding_rs 0.7, the same WHATWG decoders
//! by the same author as the 0.8 this crate replaces in the Worker, so a native
//! test of Japanese or Chinese mail decodes it for real.

use crate::Charset;

/// The whole of `bytes` decoded as `charset`.
pub(crate) fn decode_whole(charset: Charset, bytes: &[u8]) -> String {
    let encoding = match charset {
        Charset::Big5 => legacy_encoding::BIG5,
        Charset::EucJp => legacy_encoding::EUC_JP,
        Charset::EucKr => legacy_encoding::EUC_KR,
        Charset::Gb18030 => legacy_encoding::GB18030,
        Charset::Gbk => legacy_encoding::GBK,
        Charset::Ibm866 => legacy_encoding::IBM866,
        Charset::Iso2022Jp => legacy_encoding::ISO_2022_JP,
        Charset::Replacement => legacy_encoding::REPLACEMENT,
        Charset::ShiftJis => legacy_encoding::SHIFT_JIS,
        Charset::Windows874 => legacy_encoding::WINDOWS_874,
        Charset::XMacCyrillic => legacy_encoding::X_MAC_CYRILLIC,
        Charset::XUserDefined => legacy_encoding::X_USER_DEFINED,
        Charset::Utf8 => legacy_encoding::UTF_8,
        Charset::Utf16LittleEndian => legacy_encoding::UTF_16LE,
        Charset::Utf16BigEndian => legacy_encoding::UTF_16BE,
    };
    // As the runtime's TextDecoder does: one UTF-8 or UTF-16 mark dropped (the
    // caller has chosen the charset already), every other byte decoded.
    let (text, _had_errors) = encoding.decode_with_bom_removal(bytes);
    text.into_owned()
}
