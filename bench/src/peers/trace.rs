//! The teacher-forced loop every Rust engine runs: the same steps, the same timing points.
//!
//! A text of `n` tokens has `n + 1` steps. At each step the engine computes its mask (timed);
//! before a token, the token must be in the mask and is then committed (timed). After the last
//! token the engine must accept, unless the text was cut by the step budget. A text ends at its
//! first failure, which is recorded with the step and the token; the run goes on with the next
//! text.

use std::time::Instant;

use super::job::{Text, TextOutcome};

/// One engine's state along one text.
pub trait Session {
    /// Computes the mask of the current state (the timed operation).
    fn fill_mask(&mut self) -> Result<(), String>;
    /// Whether the mask last computed allows `token`.
    fn allows(&self, token: u32) -> bool;
    /// Commits `token` (the timed operation).
    fn commit(&mut self, token: u32) -> Result<(), String>;
    /// Whether the text so far is a complete sentence.
    fn is_accepting(&mut self) -> bool;
}

/// The latencies of a trace, in nanoseconds.
#[derive(Debug, Default)]
pub struct Timings {
    /// One per mask.
    pub mask_ns: Vec<u64>,
    /// One per commit.
    pub commit_ns: Vec<u64>,
}

/// Teacher-forces `text` through `session`, adding to `timings`.
pub fn trace(session: &mut dyn Session, text: &Text, timings: &mut Timings) -> TextOutcome {
    let mut steps = 0;
    let fail = |steps, why: String| TextOutcome {
        name: text.name.clone(),
        steps,
        accepted: false,
        why: Some(why),
    };
    for step in 0..=text.tokens.len() {
        let at = Instant::now();
        let filled = session.fill_mask();
        timings.mask_ns.push(at.elapsed().as_nanos() as u64);
        steps += 1;
        if let Err(e) = filled {
            return fail(steps, format!("step {step}: mask failed: {e}"));
        }
        let Some(&token) = text.tokens.get(step) else {
            break;
        };
        if !session.allows(token) {
            return fail(steps, format!("step {step}: token {token} is masked out"));
        }
        let at = Instant::now();
        let committed = session.commit(token);
        let elapsed = at.elapsed().as_nanos() as u64;
        match committed {
            Ok(()) => timings.commit_ns.push(elapsed),
            Err(e) => return fail(steps, format!("step {step}: commit of {token} failed: {e}")),
        }
    }
    if !text.truncated && !session.is_accepting() {
        return fail(
            steps,
            format!("does not accept after all {} tokens", text.tokens.len()),
        );
    }
    TextOutcome {
        name: text.name.clone(),
        steps,
        accepted: true,
        why: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Accepts tokens below `limit`; accepting after an even count.
    struct Toy {
        limit: u32,
        committed: usize,
        masks: usize,
    }

    impl Session for Toy {
        fn fill_mask(&mut self) -> Result<(), String> {
            self.masks += 1;
            Ok(())
        }
        fn allows(&self, token: u32) -> bool {
            token < self.limit
        }
        fn commit(&mut self, _token: u32) -> Result<(), String> {
            self.committed += 1;
            Ok(())
        }
        fn is_accepting(&mut self) -> bool {
            self.committed.is_multiple_of(2)
        }
    }

    fn text(tokens: &[u32], truncated: bool) -> Text {
        Text {
            name: "t".into(),
            tokens: tokens.to_vec(),
            truncated,
            expect_valid: None,
        }
    }

    #[test]
    fn steps_outcomes_and_sample_counts() {
        let mut timings = Timings::default();
        let mut toy = Toy {
            limit: 5,
            committed: 0,
            masks: 0,
        };
        let ok = trace(&mut toy, &text(&[1, 2], false), &mut timings);
        assert!(ok.accepted && ok.steps == 3 && toy.masks == 3);
        assert_eq!((timings.mask_ns.len(), timings.commit_ns.len()), (3, 2));

        let mut toy = Toy {
            limit: 5,
            committed: 0,
            masks: 0,
        };
        let masked = trace(&mut toy, &text(&[1, 7, 2], false), &mut timings);
        assert!(!masked.accepted);
        assert_eq!(masked.steps, 2);
        assert!(masked.why.unwrap().contains("step 1: token 7"));

        let mut toy = Toy {
            limit: 5,
            committed: 0,
            masks: 0,
        };
        let odd = trace(&mut toy, &text(&[1], false), &mut timings);
        assert!(odd.why.unwrap().contains("does not accept"));
        let mut toy = Toy {
            limit: 5,
            committed: 0,
            masks: 0,
        };
        // A cut text is not required to accept.
        assert!(trace(&mut toy, &text(&[1], true), &mut timings).accepted);
    }
}
