//! Where one request's time goes: its phases, read on the platform's clock and
//! reported as a `Server-Timing` header (W3C Server Timing) when the node's
//! configuration asks for it (`Config::server_timing`, decision 0034).
//!
//! One phase is current at a time. Switching charges the time since the last
//! switch to the phase that was current, so the phases add up to the whole
//! request and nothing is counted twice: a round trip inside a handler is
//! storage, not handler, and a tool call's own parsing, authority and storage
//! are those phases, not the MCP handler's. A phase entered for a while (a
//! round trip, a body serialised) is a `During`, which goes back to the phase
//! it interrupted when it is dropped, whichever way the work ends.
//!
//! Off (the default), `Timings` holds nothing and never reads the clock.
//!
//! The clock is `Platform::now_ms`. On Workers that is `Date.now()`, which in
//! production advances only across I/O (a mitigation of Spectre): there the
//! CPU phases read as nothing and their time lands on the I/O after them, so
//! a deployed node's timings say little more than how long its round trips
//! took. Local workerd (`wrangler dev`, which the benchmark runs) advances it
//! in real time but in whole milliseconds: one request's sub-millisecond phase
//! reads 0 or 1, and only the mean over many requests resolves it.

use std::cell::Cell;
use std::rc::Rc;

use crate::core::platform::Platform;

/// A part of a request's time, in the order the header lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Crossing between JavaScript and WebAssembly, in the adapter: reading the
    /// Worker's environment, the request converted in and the response out, and
    /// each round trip's parameters bound and rows converted.
    Boundary,
    /// What was asked: the route found, the host and the request's shape
    /// checked, the query and the JSON body read.
    Parse,
    /// Who asks and what they may do: the credential read and verified, the
    /// route's checks built and, after the first round trip, settled. Their
    /// statements ride in the handler's first round trip, which is storage.
    Authority,
    /// The round trips to the database, summed (checks, reads and the commit).
    Storage,
    /// The route's own work, between its round trips.
    Handler,
    /// The answer's body written as JSON.
    Serialise,
    /// The audit entry made and the commit's batch put together.
    Audit,
}

impl Phase {
    pub const ALL: [Phase; 7] = [
        Phase::Boundary,
        Phase::Parse,
        Phase::Authority,
        Phase::Storage,
        Phase::Handler,
        Phase::Serialise,
        Phase::Audit,
    ];

    /// The phase's metric name in the header.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Boundary => "boundary",
            Phase::Parse => "parse",
            Phase::Authority => "authority",
            Phase::Storage => "storage",
            Phase::Handler => "handler",
            Phase::Serialise => "serialise",
            Phase::Audit => "audit",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// The metric the header gives the whole request, from the adapter's first
/// instruction to its last.
pub const TOTAL: &str = "total";

/// One request's phases, or nothing when the node does not measure them. A
/// clone is the same measurement (the adapter's D1 binding holds one, to mark
/// its own conversions as the boundary).
#[derive(Clone, Default)]
pub struct Timings(Option<Rc<Measured>>);

struct Measured {
    /// When the request began, on the platform's clock.
    began: f64,
    current: Cell<Phase>,
    /// When `current` became current.
    since: Cell<f64>,
    spent: [Cell<f64>; Phase::ALL.len()],
}

impl Timings {
    /// Measures nothing: every method returns at once, reading no clock.
    pub fn off() -> Timings {
        Timings(None)
    }

    /// Measures a request that began at `began_ms` on the platform's clock, in
    /// the adapter (the boundary).
    pub fn began_at(began_ms: i64) -> Timings {
        let began = began_ms as f64;
        Timings(Some(Rc::new(Measured {
            began,
            current: Cell::new(Phase::Boundary),
            since: Cell::new(began),
            spent: Default::default(),
        })))
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Makes `phase` current from now, charging the time since the last switch
    /// to the phase that was; answers that phase (`None` when off).
    pub fn switch(&self, platform: &dyn Platform, phase: Phase) -> Option<Phase> {
        let measured = self.0.as_ref()?;
        let now = platform.now_ms() as f64;
        let previous = measured.current.replace(phase);
        let elapsed = (now - measured.since.replace(now)).max(0.0);
        let spent = &measured.spent[previous.index()];
        spent.set(spent.get() + elapsed);
        Some(previous)
    }

    /// Makes `phase` current until the answer is dropped, then goes back to the
    /// phase it interrupted.
    pub fn during<'a>(&'a self, platform: &'a dyn Platform, phase: Phase) -> During<'a> {
        let interrupted = self.switch(platform, phase);
        During { timings: self, platform, interrupted }
    }

    /// The milliseconds charged to `phase` so far (0 when off).
    pub fn spent(&self, phase: Phase) -> f64 {
        self.0.as_ref().map_or(0.0, |measured| measured.spent[phase.index()].get())
    }

    /// The `Server-Timing` header's value as of now: every phase's duration,
    /// storage's with how many round trips it took, and the whole request's;
    /// `None` when off.
    pub fn header(&self, platform: &dyn Platform, round_trips: u32) -> Option<String> {
        let measured = self.0.as_ref()?;
        // Charges the phase current now (the adapter's last conversions).
        self.switch(platform, measured.current.get());
        let mut metrics: Vec<String> = Phase::ALL
            .iter()
            .map(|phase| {
                let duration = self.spent(*phase);
                match phase {
                    Phase::Storage => {
                        let trips = if round_trips == 1 { "round trip" } else { "round trips" };
                        format!("{};dur={duration};desc=\"{round_trips} {trips}\"", phase.name())
                    }
                    _ => format!("{};dur={duration}", phase.name()),
                }
            })
            .collect();
        metrics.push(format!("{TOTAL};dur={}", (measured.since.get() - measured.began).max(0.0)));
        Some(metrics.join(", "))
    }
}

/// A phase made current for a while; dropped, it goes back to the phase it
/// interrupted.
#[must_use = "the phase ends when this is dropped"]
pub struct During<'a> {
    timings: &'a Timings,
    platform: &'a dyn Platform,
    interrupted: Option<Phase>,
}

impl Drop for During<'_> {
    fn drop(&mut self) {
        if let Some(phase) = self.interrupted {
            self.timings.switch(self.platform, phase);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::FixedPlatform;

    #[test]
    fn each_millisecond_is_charged_to_the_phase_current_then_and_a_phase_entered_for_a_while_ends_where_it_began() {
        let platform = FixedPlatform::at(1_000);
        let timings = Timings::began_at(1_000);
        platform.advance(2);
        timings.switch(&platform, Phase::Parse);
        platform.advance(1);
        timings.switch(&platform, Phase::Handler);
        {
            let _round_trip = timings.during(&platform, Phase::Storage);
            platform.advance(5);
            {
                let _rows = timings.during(&platform, Phase::Boundary);
                platform.advance(1);
            }
            platform.advance(3);
        }
        platform.advance(4);
        let header = timings.header(&platform, 1).unwrap();
        assert_eq!(
            header,
            "boundary;dur=3, parse;dur=1, authority;dur=0, storage;dur=8;desc=\"1 round trip\", handler;dur=4, \
             serialise;dur=0, audit;dur=0, total;dur=16"
        );
        let phases: f64 = Phase::ALL.iter().map(|phase| timings.spent(*phase)).sum();
        assert_eq!(phases, 16.0, "the phases add up to the whole request");
    }

    #[test]
    fn off_it_measures_and_reports_nothing() {
        let platform = FixedPlatform::at(1_000);
        let timings = Timings::off();
        assert_eq!(timings.switch(&platform, Phase::Parse), None);
        let _storage = timings.during(&platform, Phase::Storage);
        assert_eq!(timings.header(&platform, 2), None);
        assert_eq!(timings.spent(Phase::Storage), 0.0);
    }
}
