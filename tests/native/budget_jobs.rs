//! The schedule's round-trip budget: each job's round trips when there is
//! nothing to do, and what one more unit of work costs it. A job, like a route
//! (`budget`), has a budget, held here so a change that makes the schedule
//! chattier is seen.

use crate::support::*;

#[test]
fn each_scheduled_job_stays_within_its_round_trips() {
    use mailroom::schedule::{Job, run_job};
    let world = World::new();
    let idle = |job| world.node.run(run_job(&world.node.node(), job)).unwrap();
    // Reminders: what is due and what expires, in one read.
    assert_eq!(idle(Job::DeliverReminders), 1);
    // Snoozed conversations: the wake-ups due, in one read (what a wake costs
    // is held in `snooze::waking_stays_within_its_round_trips`).
    assert_eq!(idle(Job::WakeSnoozed), 1);
    // The sweep: both of its updates in one batch.
    assert_eq!(idle(Job::SweepAgentMessages), 1);
    let without = World::without_agent_network();
    let swept = without.node.run(run_job(&without.node.node(), Job::SweepAgentMessages)).unwrap();
    assert_eq!(swept, 0, "with the agent network off, the sweep reads nothing");
    // eDiscovery: the oldest building export, none.
    assert_eq!(idle(Job::BuildExports), 1);
    // The upkeep, one each: forgetting what ended, the originals owed, the
    // mailboxes' segments to anchor, the sealer's look, the closed windows of
    // attempts, the checkpoint's D1 record, a page of the walk, and the
    // checkpoint written.
    assert_eq!(idle(Job::Upkeep), 8);
    // With mailboxes, one more to record which segments were checked, and two
    // for each mailbox checked, to its own database: its segment's sealer's
    // look and its walk. A run checks at most SEGMENTS_PER_RUN of them (each a
    // subrequest), those checked longest ago.
    world.mailbox("support@mailroom.test");
    world.mailbox("sales@mailroom.test");
    assert_eq!(idle(Job::Upkeep), 8 + 1 + 2 * 2);
    for index in 0..10 {
        world.mailbox(&format!("desk-{index}@mailroom.test"));
    }
    let most = u32::try_from(mailroom::audit::segments::SEGMENTS_PER_RUN).unwrap();
    assert_eq!(idle(Job::Upkeep), 8 + 1 + 2 * most);
}
