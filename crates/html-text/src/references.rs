//! Character references (`&amp;`, `&#8217;`, `&nbsp`): decoded as a browser
//! decodes them in text, with mail-parser's table of HTML's named references.

use mail_parser::decoders::html::add_html_token;

/// The character a numeric character reference stands for, as a browser reads
/// it: Windows-1252's for 0x80–0x9F (what such mail meant), U+FFFD for
/// nothing, a surrogate or beyond Unicode.
fn numeric_reference(code: u32) -> char {
    const WINDOWS_1252: [u32; 32] = [
        0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d,
        0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d,
        0x17e, 0x178,
    ];
    let code = match code {
        0x80..=0x9f => WINDOWS_1252[(code - 0x80) as usize],
        other => other,
    };
    match code {
        0 => char::REPLACEMENT_CHARACTER,
        code => char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

/// Named references a browser reads without their `;` in text, of those mail uses.
const LEGACY_WITHOUT_SEMICOLON: &[&str] = &["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"];

/// The characters of `text` with its character references decoded, each
/// handed to `each`.
pub(crate) fn decode(text: &str, mut each: impl FnMut(char)) {
    let mut rest = text;
    while let Some(ampersand) = rest.find('&') {
        rest[..ampersand].chars().for_each(&mut each);
        rest = &rest[ampersand..];
        let consumed = reference(rest, &mut each);
        if consumed == 0 {
            each('&');
            rest = &rest[1..];
        } else {
            rest = &rest[consumed..];
        }
    }
    rest.chars().for_each(each);
}

/// Decodes the character reference `text` starts with (at its `&`), handing
/// its characters to `each`; how many bytes it took, 0 when it is none.
fn reference(text: &str, each: &mut impl FnMut(char)) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(1) == Some(&b'#') {
        let hexadecimal = matches!(bytes.get(2), Some(b'x' | b'X'));
        let digits_start = if hexadecimal { 3 } else { 2 };
        let digits = bytes[digits_start..]
            .iter()
            .take_while(|byte| if hexadecimal { byte.is_ascii_hexdigit() } else { byte.is_ascii_digit() })
            .count();
        if digits == 0 {
            return 0;
        }
        let number = &text[digits_start..digits_start + digits];
        let code = u32::from_str_radix(number, if hexadecimal { 16 } else { 10 }).unwrap_or(u32::MAX);
        each(numeric_reference(code));
        let end = digits_start + digits;
        return if bytes.get(end) == Some(&b';') { end + 1 } else { end };
    }
    let name_length = bytes[1..].iter().take(32).take_while(|byte| byte.is_ascii_alphanumeric()).count();
    if name_length == 0 {
        return 0;
    }
    let name = &text[1..1 + name_length];
    if bytes.get(1 + name_length) == Some(&b';') {
        let written = &text[..name_length + 2];
        let mut decoded = String::new();
        add_html_token(&mut decoded, written.as_bytes(), false);
        // mail-parser hands an unknown name back as written: that is text.
        if decoded == written {
            return 0;
        }
        decoded.chars().for_each(each);
        return name_length + 2;
    }
    if LEGACY_WITHOUT_SEMICOLON.contains(&name) {
        let mut decoded = String::new();
        add_html_token(&mut decoded, format!("&{name};").as_bytes(), false);
        decoded.chars().for_each(each);
        return name_length + 1;
    }
    0
}
