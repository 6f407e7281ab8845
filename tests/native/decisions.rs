//! The decision records in `docs/decisions/` and their index, held to each other: every
//! record states its status under its title, the index lists every record once, in
//! number order, with the record's own title and status, and a status names only
//! later records that exist. Reads the files only; nothing of the node runs here.

use std::path::{Path, PathBuf};

/// Where the status line begins; what follows it is the status itself.
const STATUS_PREFIX: &str = "**Status:** ";

/// The three forms a status takes, as the index's README describes them.
const STATUS_FORMS: &str =
    "`Accepted.`, `Accepted; amended by [NNNN](NNNN-….md), [NNNN](NNNN-….md).` or `Superseded by [NNNN](NNNN-….md).`";

/// One `NNNN-words.md` file of `docs/decisions/`.
struct DecisionRecord {
    number: u32,
    file_name: String,
    text: String,
}

/// What a record's status line says once read: its text with each link reduced to
/// its number (what the index shows), and the records it names, each with the file
/// its link points at.
struct RecordStatus {
    plain: String,
    named_records: Vec<(u32, String)>,
}

fn decisions_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/decisions")
}

/// The number a record's file name begins with, if it is named as a record is.
fn record_number(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_suffix(".md")?;
    let (digits, words) = stem.split_once('-')?;
    let well_formed = digits.len() == 4 && digits.bytes().all(|byte| byte.is_ascii_digit()) && !words.is_empty();
    if well_formed { digits.parse().ok() } else { None }
}

/// Every record, in number order. A Markdown file that is neither a record nor the
/// index fails here: misnamed, it would be left out of every check below.
fn decision_records() -> Vec<DecisionRecord> {
    let mut records = Vec::new();
    let mut misnamed = Vec::new();
    for entry in std::fs::read_dir(decisions_directory()).unwrap().filter_map(Result::ok) {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if file_name == "README.md" || !file_name.ends_with(".md") {
            continue;
        }
        match record_number(&file_name) {
            Some(number) => {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                records.push(DecisionRecord { number, file_name, text });
            }
            None => misnamed.push(format!("docs/decisions/{file_name}")),
        }
    }
    assert!(
        misnamed.is_empty(),
        "{misnamed:?}: a decision record is named NNNN-words-of-its-title.md (four digits, the next number); \
         rename it, or move it out of docs/decisions/"
    );
    records.sort_by_key(|record| record.number);
    records
}

/// The text of a record's `# Title` line, which is its first.
fn record_title(record: &DecisionRecord) -> Result<&str, String> {
    let first_line = record.text.lines().next().unwrap_or_default();
    first_line.strip_prefix("# ").ok_or_else(|| {
        format!(
            "docs/decisions/{}: the first line must be the record's `# Title`; found `{first_line}`",
            record.file_name
        )
    })
}

/// Reads one `[NNNN](NNNN-….md)` link, answering the number and the file it points at.
fn linked_record(link: &str) -> Option<(u32, String)> {
    let (number, target) = link.strip_prefix('[')?.strip_suffix(')')?.split_once("](")?;
    let well_formed = number.len() == 4 && number.bytes().all(|byte| byte.is_ascii_digit());
    if well_formed { Some((number.parse().ok()?, target.to_owned())) } else { None }
}

/// Reads the status under a record's title: the title, one blank line, the status
/// line, and a blank line before the record's text, so Markdown keeps it a paragraph.
fn record_status(record: &DecisionRecord) -> Result<RecordStatus, String> {
    let file = format!("docs/decisions/{}", record.file_name);
    let lines: Vec<&str> = record.text.lines().collect();
    let shape_is_right = lines.get(1) == Some(&"")
        && lines.get(2).is_some_and(|line| line.starts_with(STATUS_PREFIX))
        && lines.get(3).is_none_or(|line| line.is_empty());
    if !shape_is_right {
        return Err(format!(
            "{file}: under the `# Title` line put a blank line, then `{STATUS_PREFIX}…` ({STATUS_FORMS}), \
             then a blank line; found {:?}",
            lines.iter().skip(1).take(3).collect::<Vec<_>>()
        ));
    }
    let written = lines[2][STATUS_PREFIX.len()..].to_owned();
    if written == "Accepted." {
        return Ok(RecordStatus { plain: written, named_records: Vec::new() });
    }
    let unreadable = || format!("{file}: the status `{written}` is not one of {STATUS_FORMS}");
    let (wording, links) = ["Accepted; amended by ", "Superseded by "]
        .iter()
        .find_map(|wording| Some((*wording, written.strip_prefix(wording)?.strip_suffix('.')?)))
        .ok_or_else(unreadable)?;
    let named_records: Vec<(u32, String)> =
        links.split(", ").map(linked_record).collect::<Option<_>>().ok_or_else(unreadable)?;
    // A whole record is replaced by one record; parts may be amended by several.
    if wording == "Superseded by " && named_records.len() != 1 {
        return Err(format!("{file}: a record is superseded by exactly one later record; found `{written}`"));
    }
    let numbers: Vec<String> = named_records.iter().map(|(number, _)| format!("{number:04}")).collect();
    let plain = format!("{wording}{}.", numbers.join(", "));
    Ok(RecordStatus { plain, named_records })
}

#[test]
fn decision_records_are_numbered_from_0001_without_gaps() {
    // Sorted by number, the record at each place must carry that place's number;
    // the first one that does not is where the gap or the repeat is.
    let records = decision_records();
    let out_of_place = records.iter().zip(1..).find(|(record, expected_number)| record.number != *expected_number);
    if let Some((record, expected_number)) = out_of_place {
        panic!(
            "docs/decisions/{}: numbered {:04} where {expected_number:04} comes next; records are numbered \
             0001, 0002, … with no gap or repeat, so give it the next free number (and its row in the index)",
            record.file_name, record.number
        );
    }
}

#[test]
fn every_decision_record_states_its_status_under_its_title() {
    let records = decision_records();
    let mut problems = Vec::new();
    for record in &records {
        if let Err(problem) = record_title(record) {
            problems.push(problem);
        }
        let status = match record_status(record) {
            Ok(status) => status,
            Err(problem) => {
                problems.push(problem);
                continue;
            }
        };
        // An amendment or a replacement comes after what it changes, and the link
        // must lead to it: a reader follows the status to the record that says more.
        for (number, target) in &status.named_records {
            let file = format!("docs/decisions/{}", record.file_name);
            match records.iter().find(|named| named.number == *number) {
                None => problems.push(format!("{file}: its status names {number:04}, and no such record exists")),
                Some(named) if named.number <= record.number => problems.push(format!(
                    "{file}: its status names {number:04}, which is not later than {:04}; \
                     only a later record amends or supersedes an earlier one",
                    record.number
                )),
                Some(named) if *target != named.file_name => problems.push(format!(
                    "{file}: its status links {number:04} to `{target}`; link it to `{}`",
                    named.file_name
                )),
                Some(_) => {}
            }
        }
    }
    assert!(problems.is_empty(), "decision records whose status to fix:\n{}", problems.join("\n"));
}

#[test]
fn the_decisions_index_lists_every_record_with_its_title_and_status() {
    let records = decision_records();
    let index = std::fs::read_to_string(decisions_directory().join("README.md")).unwrap();
    // The table's rows are the lines that begin with a link to a record; the header
    // and its rule begin otherwise.
    let rows: Vec<&str> = index.lines().filter(|line| line.starts_with("| [")).collect();
    let mut problems = Vec::new();
    if rows.len() != records.len() {
        problems.push(format!(
            "docs/decisions/README.md: its table has {} rows and there are {} records; \
             give each record exactly one row",
            rows.len(),
            records.len()
        ));
    }
    for (position, record) in records.iter().enumerate() {
        let (Ok(title), Ok(status)) = (record_title(record), record_status(record)) else {
            // The record's own test names what to fix in it.
            continue;
        };
        let expected_row = format!("| [{:04}]({}) | {title} | {} |", record.number, record.file_name, status.plain);
        match rows.get(position) {
            Some(row) if *row == expected_row => {}
            Some(row) => problems.push(format!(
                "docs/decisions/README.md: row {} should be the row of docs/decisions/{}, \
                 with its title and its status as the record states it (links as numbers):\n  \
                 expected `{expected_row}`\n  found    `{row}`",
                position + 1,
                record.file_name
            )),
            None => problems.push(format!(
                "docs/decisions/README.md: no row for docs/decisions/{}; add `{expected_row}` in number order",
                record.file_name
            )),
        }
    }
    assert!(problems.is_empty(), "the decisions index to fix:\n{}", problems.join("\n"));
}
