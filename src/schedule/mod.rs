//! The schedule: the third way work reaches the node, beside HTTP requests
//! (`dispatch`) and inbound mail (the email handler). Each cron trigger
//! wrangler.toml declares names the jobs it runs in one table (`crons`), and
//! each job is one function of the domain that owns its work (`jobs`).

mod crons;
mod jobs;

pub use crons::{CRONS, cron_of, jobs_of, on_schedule};
pub use jobs::{Job, JobFailure, run_job, upkeep};
