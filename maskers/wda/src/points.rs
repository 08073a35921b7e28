//! The on-demand automaton's lexer points, prepared ahead: [`Points`].
//!
//! A point's first use is its spans (one walk of the classes' representatives from there,
//! [`PointSpanner::walk`], into a table of spans whose ids hold across points), then per token
//! class the continuation its span starts ([`PointBuilder::conts_of`]: a read by span id once
//! the span is known), then the initial items (the classes grouped by continuation). The first
//! two need nothing of the automaton's cache, so a thread of its own makes them after the
//! build, at the lowest priority (first the points the start point leads to: the first mask
//! makes the start point itself; then the points the prepared ones lead to, the most tokens'
//! first, and before those the points led to by any a mask had to make itself: the texts are
//! there; then the rest), in its own tables of continuations; a mask that finds its
//! point prepared translates the point's continuations into the cache's table (each once:
//! the thread publishes its new ones in an append-only chain of chunks) and groups them, a
//! tenth of the work. A mask that needs a point not prepared yet makes it itself, into the
//! cache's own table, and never waits for the thread: the two share no lock (the thread
//! could be descheduled while holding one).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use munch_tokens::{ClassId, LexPoint, PointSpanner, SpanId, SpanIds, SpansBuildError};

use crate::lexical::{PointBuilder, UNSET};
use crate::template::{Cont, Conts, Offer};

/// Classes per call to [`PointBuilder::conts_of`] between two looks at the stop flag.
const CHUNK: usize = 1024;

/// A point the preparing thread made.
pub(crate) struct Prepared {
    /// Per token class, the continuation its span starts, in the thread's table (see
    /// [`Chunk`]); [`NEVER`](crate::template::NEVER) where dead.
    pub(crate) cont_of: Box<[Cont]>,
    /// The most continuation id in `cont_of`.
    pub(crate) max_cont: Cont,
    /// The points the spans end at (the open lexeme's state, and each fork's), the most
    /// classes' first: where a text goes next, the thread's order.
    next: Box<[u32]>,
}

/// The preparing thread's continuations `first..first + offers.len()`, and the next chunk
/// once published: an append-only chain that masks read without a lock.
pub(crate) struct Chunk {
    pub(crate) first: usize,
    pub(crate) offers: Box<[Offer]>,
    pub(crate) next: OnceLock<Arc<Chunk>>,
}

/// Every lexer point, shared by the masks and the preparing thread.
pub(crate) struct Points {
    spanner: PointSpanner,
    /// Every lexer point; a point is an index here.
    lexer_points: Vec<LexPoint>,
    /// Per lexer state, the point `(s, None)`, or `u32::MAX`.
    plain: Vec<u32>,
    class_len: usize,
    max_continuations: usize,
    /// Per point: made by the preparing thread; `None` inside if a budget was exceeded.
    ready: Vec<OnceLock<Option<Prepared>>>,
    /// Per point: a mask made it itself (the thread need not).
    taken: Vec<AtomicBool>,
    /// The first chunk of the thread's continuations (none: [`Conts::new`]'s are the same in
    /// every table).
    log: Arc<Chunk>,
    /// The thread's state; locked only by [`Points::prepare_all`], never by a mask.
    preparer: Mutex<Preparer>,
    prepared: AtomicUsize,
    /// Set when the masker is dropped: the preparing thread stops at its next point.
    stop: AtomicBool,
}

/// The preparing thread's memos and table, and the chain's last chunk.
struct Preparer {
    pb: PointBuilder,
    conts: Conts,
    tail: Arc<Chunk>,
    /// The spans of the points walked, and per span its continuation in `conts`, or [`UNSET`].
    ids: SpanIds,
    root_of: Vec<u32>,
    /// The spans of the point being walked, per class.
    of: Vec<Option<SpanId>>,
}

impl Points {
    pub(crate) fn new(
        spanner: PointSpanner,
        lexer_points: Vec<LexPoint>,
        plain: Vec<u32>,
        class_len: usize,
        max_continuations: usize,
        pb: PointBuilder,
    ) -> Points {
        let conts = Conts::new();
        let log = Arc::new(Chunk {
            first: conts.len(),
            offers: Box::new([]),
            next: OnceLock::new(),
        });
        let n = lexer_points.len();
        let ids = spanner.span_ids();
        Points {
            spanner,
            lexer_points,
            plain,
            class_len,
            max_continuations,
            ready: (0..n).map(|_| OnceLock::new()).collect(),
            taken: (0..n).map(|_| AtomicBool::new(false)).collect(),
            preparer: Mutex::new(Preparer {
                pb,
                conts,
                tail: Arc::clone(&log),
                ids,
                root_of: Vec::new(),
                of: Vec::new(),
            }),
            log,
            prepared: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        }
    }

    /// The number of points.
    pub(crate) fn len(&self) -> usize {
        self.lexer_points.len()
    }

    /// Points the preparing thread made so far.
    pub(crate) fn prepared(&self) -> usize {
        self.prepared.load(Ordering::Relaxed)
    }

    /// Point `p` as the preparing thread made it, if it has.
    pub(crate) fn ready(&self, p: usize) -> Option<&Option<Prepared>> {
        self.ready[p].get()
    }

    /// The first chunk of the preparing thread's continuations.
    pub(crate) fn log(&self) -> &Arc<Chunk> {
        &self.log
    }

    /// Heap bytes the points may hold once every one is prepared (a continuation per class
    /// and point), the spanner's tables included; the thread's table of continuations apart.
    pub(crate) fn max_heap_bytes(&self) -> usize {
        self.spanner.heap_bytes()
            + self.lexer_points.capacity() * std::mem::size_of::<LexPoint>()
            + self.plain.capacity() * 4
            + self.lexer_points.len() * (self.class_len * 4 + 64)
    }

    /// An empty table of spans for the walks of a mask's points.
    pub(crate) fn span_ids(&self) -> SpanIds {
        self.spanner.span_ids()
    }

    /// The spans of point `p` per class into `of`, in `ids`, for a mask that makes the point
    /// itself (the thread then skips it). `false`: `p` is not a point of the lexer.
    pub(crate) fn walk_for_mask(
        &self,
        p: usize,
        ids: &mut SpanIds,
        of: &mut Vec<Option<SpanId>>,
    ) -> Result<bool, SpansBuildError> {
        self.taken[p].store(true, Ordering::Relaxed);
        self.spanner.walk(self.lexer_points[p], ids, of)
    }

    /// Prepares every point not made yet on the calling thread: the points `first` (the
    /// lexer's start point) leads to, then `first`, then breadth-first the points prepared
    /// ones lead to (the most classes' first), then the rest in order. Returns early once [`Points::stop`] is called. Calls run one at
    /// a time (a second waits for the first, which leaves it nothing to do).
    pub(crate) fn prepare_all(&self, first: Option<usize>) {
        let mut prep = self.preparer.lock().unwrap_or_else(|p| p.into_inner());
        let n = self.len();
        let mut queued = vec![false; n];
        let mut queue = VecDeque::new();
        if let Some(f) = first.filter(|&f| f < n) {
            // The first mask makes the start point itself (it never waits for this thread), so
            // the thread begins where that point leads, and prepares the point after those
            // if no mask has taken it by then.
            queued[f] = true;
            let Preparer { ids, of, .. } = &mut *prep;
            if let Ok(true) = self.spanner.walk(self.lexer_points[f], ids, of) {
                for &r in self.next_of(ids, of).iter() {
                    if !queued[r as usize] {
                        queued[r as usize] = true;
                        queue.push_back(r as usize);
                    }
                }
            }
            queue.push_back(f);
        }
        let mut rest = 0..n;
        // Points masks made themselves, seen: where the texts are, so their successors go
        // first.
        let mut seen = vec![false; n];
        let mut follow = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            follow.clear();
            for (q, taken) in self.taken.iter().enumerate() {
                if !seen[q] && taken.load(Ordering::Relaxed) {
                    seen[q] = true;
                    follow.push(q);
                }
            }
            for &q in &follow {
                // A second walk of the point, on idle time, for where it leads.
                let Preparer { ids, of, .. } = &mut *prep;
                if let Ok(true) = self.spanner.walk(self.lexer_points[q], ids, of) {
                    // Ahead of the queue, queued already or not (a point met again once
                    // made is skipped).
                    for &r in self.next_of(ids, of).iter().rev() {
                        let r = r as usize;
                        if self.ready[r].get().is_none() && !self.taken[r].load(Ordering::Relaxed) {
                            queued[r] = true;
                            queue.push_front(r);
                        }
                    }
                }
            }
            let p = match queue.pop_front() {
                Some(p) => p,
                None => match rest.find(|&p| !queued[p]) {
                    Some(p) => {
                        queued[p] = true;
                        p
                    }
                    None => return,
                },
            };
            if self.ready[p].get().is_some() || self.taken[p].load(Ordering::Relaxed) {
                continue;
            }
            let t0 = std::time::Instant::now();
            let walked = {
                let Preparer { ids, of, .. } = &mut *prep;
                self.spanner.walk(self.lexer_points[p], ids, of)
            };
            let made = match walked {
                Ok(true) => self.derive(&mut prep),
                // Every start is a point of the lexer; a budget exceeded gives up there.
                Ok(false) | Err(_) => Some(None),
            };
            // Stopped halfway.
            let Some(made) = made else { return };
            if crate::determinize::debug() {
                eprintln!(
                    "wda-lazy: point {p} prepared ahead in {:.0} µs",
                    t0.elapsed().as_secs_f64() * 1e6
                );
            }
            if let Some(made) = &made {
                for &q in made.next.iter() {
                    if !queued[q as usize] {
                        queued[q as usize] = true;
                        queue.push_back(q as usize);
                    }
                }
            }
            if self.ready[p].set(made).is_ok() {
                self.prepared.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The continuations of the classes of the point just walked (`prep.of`) in the thread's
    /// table, published, and where its spans end. `None`: stopped; `Some(None)`: past the
    /// continuations' budget.
    fn derive(&self, prep: &mut Preparer) -> Option<Option<Prepared>> {
        let mut cont_of = Vec::with_capacity(self.class_len);
        let Preparer {
            pb,
            conts,
            tail,
            ids,
            root_of,
            of,
        } = prep;
        root_of.resize(ids.span_len(), UNSET);
        let span_of = |c: ClassId| of[c.as_usize()];
        let mut lo = 0;
        while lo < self.class_len {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            let hi = (lo + CHUNK).min(self.class_len);
            pb.conts_of(conts, &*ids, lo..hi, span_of, root_of, &mut cont_of);
            if conts.len() > self.max_continuations {
                return Some(None);
            }
            lo = hi;
        }
        let have = tail.first + tail.offers.len();
        if conts.len() > have {
            let chunk = Arc::new(Chunk {
                first: have,
                offers: conts.since(have),
                next: OnceLock::new(),
            });
            // This thread alone appends.
            let _ = tail.next.set(Arc::clone(&chunk));
            *tail = chunk;
        }
        let max_cont = cont_of.iter().copied().max().unwrap_or(0);
        Some(Some(Prepared {
            cont_of: cont_of.into_boxed_slice(),
            max_cont,
            next: self.next_of(ids, of),
        }))
    }

    /// The points a point's spans end at (the open lexeme's state, and each fork's), the most
    /// classes' first.
    fn next_of(&self, ids: &SpanIds, of: &[Option<SpanId>]) -> Box<[u32]> {
        // Where the spans end, by how many classes end there.
        let mut count: Vec<(u32, u32)> = Vec::new();
        let mut at = vec![u32::MAX; self.lexer_points.len()];
        let mut add = |s: munch_lexer::LexState| {
            let q = self.plain.get(s.as_usize()).copied().unwrap_or(u32::MAX);
            if q == u32::MAX {
                return;
            }
            let i = &mut at[q as usize];
            if *i == u32::MAX {
                *i = count.len() as u32;
                count.push((0, q));
            }
            count[*i as usize].0 += 1;
        };
        for s in of.iter().take(self.class_len) {
            if let Some(s) = *s {
                let span = ids.span(s);
                add(span.end);
                for f in span.forks {
                    add(f.state);
                }
            }
        }
        count.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        count.into_iter().map(|(_, q)| q).collect()
    }

    /// Stops [`Points::prepare_all`] at its next point.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The preparing thread's continuations in a cache's table: each translated once, in id order
/// (a continuation's controls name lower ids).
pub(crate) struct Translation {
    /// Per thread id: the cache's id.
    to: Vec<Cont>,
    /// The chunk whose continuations are the last translated.
    at: Arc<Chunk>,
}

impl Translation {
    pub(crate) fn new(points: &Points) -> Translation {
        let base = Conts::new();
        Translation {
            to: (0..base.len() as Cont).collect(),
            at: Arc::clone(points.log()),
        }
    }

    /// Translates the thread's continuations up to `max` (published: the point naming it is
    /// ready) into `conts`.
    pub(crate) fn upto(&mut self, conts: &mut Conts, max: Cont) {
        while self.to.len() <= max as usize {
            let Some(next) = self.at.next.get() else {
                unreachable!("a ready point's continuations are published before it")
            };
            let next = Arc::clone(next);
            debug_assert_eq!(next.first, self.to.len());
            for (ctrls, succ) in next.offers.iter() {
                let mapped = ctrls
                    .iter()
                    .map(|&(t, k)| (t, self.to[k as usize]))
                    .collect();
                self.to.push(conts.intern(mapped, *succ));
            }
            self.at = next;
        }
    }

    /// The cache's id of the thread's continuation `k` (translated).
    #[inline]
    pub(crate) fn get(&self, k: Cont) -> Cont {
        self.to[k as usize]
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.to.capacity() * 4
    }
}

/// Lowers the calling thread's scheduling priority to the lowest (nice 19), so that the
/// preparing thread takes a core only when masks and the rest of the process leave it idle.
pub(crate) fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: `gettid` and `setpriority` take no pointers and touch no memory of ours; on Linux
    // `PRIO_PROCESS` with a thread id sets that thread's nice value alone, and a failure leaves
    // it unchanged.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
    }
}
