//! Time in a native test: a clock that moves only when a test moves it, or
//! when everything the node is waiting for is a timer, and then straight to the
//! earliest one. So slowness costs a test no time: a receiver that answers
//! after nine seconds, one that never answers, a run that would last minutes,
//! two runs overlapping, all play out at once and in the same order every time.
//!
//! `VirtualClock::sleep` is what `FixedPlatform::sleep` hands the node, and
//! `run` drives a future to its end on the clock. Nothing else here: the code
//! under test is the production code, which asks its platform for timers.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

/// The clock, with the timers waiting on it.
#[derive(Default)]
pub struct VirtualClock {
    now_ms: Cell<i64>,
    next_timer: Cell<u64>,
    /// Each waiting timer, by its id: when it is due, and whom to wake.
    timers: RefCell<BTreeMap<u64, (i64, Waker)>>,
}

impl VirtualClock {
    pub fn at(now_ms: i64) -> Rc<VirtualClock> {
        let clock = VirtualClock::default();
        clock.now_ms.set(now_ms);
        Rc::new(clock)
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms.get()
    }

    /// Moves the clock on by `milliseconds`, as a test does between requests.
    pub fn advance(&self, milliseconds: i64) {
        self.now_ms.set(self.now_ms.get() + milliseconds);
    }

    /// A future ready once the clock reads `milliseconds` from now.
    pub fn sleep(self: &Rc<Self>, milliseconds: i64) -> Timer {
        let id = self.next_timer.get();
        self.next_timer.set(id + 1);
        Timer { clock: Rc::clone(self), id, due_ms: self.now_ms().saturating_add(milliseconds) }
    }

    /// Wakes the timers that are due; when none is, first moves the clock to
    /// the earliest. Whether there was a timer to wake.
    fn wake_the_next(&self) -> bool {
        let Some(earliest) = self.timers.borrow().values().map(|(due, _)| *due).min() else {
            return false;
        };
        if earliest > self.now_ms() {
            self.now_ms.set(earliest);
        }
        let now = self.now_ms();
        let mut timers = self.timers.borrow_mut();
        let due: Vec<u64> = timers.iter().filter(|(_, (due_ms, _))| *due_ms <= now).map(|(id, _)| *id).collect();
        let wakers: Vec<Waker> = due.iter().filter_map(|id| timers.remove(id)).map(|(_, waker)| waker).collect();
        drop(timers);
        wakers.into_iter().for_each(Waker::wake);
        true
    }
}

/// A wait on the virtual clock (`VirtualClock::sleep`).
pub struct Timer {
    clock: Rc<VirtualClock>,
    id: u64,
    due_ms: i64,
}

impl Future for Timer {
    type Output = ();

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.clock.now_ms() >= self.due_ms {
            self.clock.timers.borrow_mut().remove(&self.id);
            return Poll::Ready(());
        }
        self.clock.timers.borrow_mut().insert(self.id, (self.due_ms, context.waker().clone()));
        Poll::Pending
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        // A timer that lost a race (a request answered first) waits no more.
        self.clock.timers.borrow_mut().remove(&self.id);
    }
}

/// Whether the future being run was woken since it was last polled.
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs `future` to its end on `clock`: polled while something wakes it; when
/// nothing does, the clock moves to the earliest timer. A future that waits for
/// something no timer brings is a defect in the test, which fails saying so.
pub fn run<F: Future>(clock: &VirtualClock, future: F) -> F::Output {
    let woken = Arc::new(Woken(AtomicBool::new(false)));
    let waker = Waker::from(Arc::clone(&woken));
    let mut context = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        if woken.0.swap(false, Ordering::SeqCst) {
            continue;
        }
        assert!(clock.wake_the_next(), "the node waits for something no timer will bring");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_that_overlap_take_the_longest_not_the_sum() {
        let clock = VirtualClock::at(1_000);
        let order = RefCell::new(Vec::new());
        let wait = |milliseconds: i64, name: &'static str| {
            let clock = Rc::clone(&clock);
            let order = &order;
            async move {
                clock.sleep(milliseconds).await;
                order.borrow_mut().push((name, clock.now_ms()));
            }
        };
        run(&clock, futures_util::future::join3(wait(9_000, "slow"), wait(10, "quick"), wait(5_000, "middle")));
        assert_eq!(*order.borrow(), [("quick", 1_010), ("middle", 6_000), ("slow", 10_000)]);
        assert_eq!(clock.now_ms(), 10_000);
    }

    #[test]
    fn a_timer_that_lost_its_race_moves_nothing() {
        let clock = VirtualClock::at(0);
        let raced = futures_util::future::select(Box::pin(async { 7 }), clock.sleep(60_000));
        assert!(matches!(run(&clock, raced), futures_util::future::Either::Left((7, _))));
        assert_eq!(clock.now_ms(), 0);
        assert!(!clock.wake_the_next(), "the dropped timer left nothing behind");
    }
}
