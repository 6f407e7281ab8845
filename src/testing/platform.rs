//! `FixedPlatform`: the platform a test node runs on, a virtual clock and a
//! seeded random stream, with the real PBKDF2.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::core::platform::{Platform, PlatformError};
use crate::core::storage::LocalBoxFuture;

use super::clock::VirtualClock;

/// A platform on a virtual clock that moves only when told to or when the node
/// waits on a timer (`VirtualClock`), and a seeded, deterministic random
/// stream. PBKDF2 is the real algorithm.
pub struct FixedPlatform {
    clock: Rc<VirtualClock>,
    random_state: Cell<u64>,
    pub logs: RefCell<Vec<String>>,
}

impl FixedPlatform {
    pub fn at(now_ms: i64) -> FixedPlatform {
        FixedPlatform {
            clock: VirtualClock::at(now_ms),
            random_state: Cell::new(0x9E37_79B9_7F4A_7C15),
            logs: RefCell::default(),
        }
    }

    pub fn advance(&self, milliseconds: i64) {
        self.clock.advance(milliseconds);
    }

    /// The clock, which the node's other test bindings (a slow receiver) wait on too.
    pub fn clock(&self) -> Rc<VirtualClock> {
        Rc::clone(&self.clock)
    }
}

impl Platform for FixedPlatform {
    fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    fn fill_random(&self, bytes: &mut [u8]) {
        // SplitMix64: deterministic, well distributed, and plainly not for production.
        for byte in bytes.iter_mut() {
            let mut state = self.random_state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            self.random_state.set(state);
            state = (state ^ (state >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            state = (state ^ (state >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            *byte = (state ^ (state >> 31)) as u8;
        }
    }

    fn pbkdf2_sha256<'a>(
        &'a self,
        password: &'a [u8],
        salt: &'a [u8],
        iterations: u32,
    ) -> LocalBoxFuture<'a, Result<[u8; 32], PlatformError>> {
        Box::pin(async move {
            let mut output = [0u8; 32];
            pbkdf2::pbkdf2_hmac::<sha2::Sha256>(password, salt, iterations, &mut output);
            Ok(output)
        })
    }

    fn sleep(&self, milliseconds: u32) -> LocalBoxFuture<'_, ()> {
        Box::pin(self.clock.sleep(i64::from(milliseconds)))
    }

    fn log(&self, message: &str) {
        self.logs.borrow_mut().push(message.to_string());
    }
}
