//! Segments and periods of aligned and incremental exports:
//! `segments/…json` (a slice fixed by a run before its units start,
//! create-if-absent so concurrent shards cut the same one) and
//! `periods/<segment-id>.json` (an aligned period exported completely).

use super::{STATE_VERSION, SegmentDoc, StateError, StateStore};
use crate::plan::Segment;

impl StateStore {
    /// Where a pending segment is stored: one per export and chain for
    /// incremental exports (so that concurrent shards cut the same one),
    /// one per period for aligned exports.
    fn segment_path(&self, seg: &Segment) -> String {
        match seg.chain {
            Some(c) => format!("{}/segments/e{}-{c}.json", self.dir, seg.export),
            None => format!("{}/segments/{}.json", self.dir, seg.id()),
        }
    }

    /// Pending segments, oldest first.
    pub async fn load_segments(&self) -> Result<Vec<Segment>, StateError> {
        let mut out: Vec<SegmentDoc> = self.load_dir("segments").await?;
        out.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.segment.id().cmp(&b.segment.id())));
        Ok(out.into_iter().map(|d| d.segment).collect())
    }

    /// Records a pending segment unless one is already pending in its place;
    /// returns the one that is.
    pub async fn create_segment(&self, seg: &Segment) -> Result<Segment, StateError> {
        let doc = SegmentDoc {
            version: STATE_VERSION,
            segment: seg.clone(),
            created_at: chrono::Utc::now().to_rfc3339(),
        };
        Ok(self.create_doc(&self.segment_path(seg), &doc).await?.segment)
    }

    /// Forgets a pending segment (complete, or replaced by a reorg repair).
    pub async fn remove_segment(&self, seg: &Segment) -> Result<(), StateError> {
        self.sink.delete(&self.segment_path(seg)).await?;
        Ok(())
    }

    fn period_path(&self, seg: &Segment) -> String {
        format!("{}/periods/{}.json", self.dir, seg.id())
    }

    /// Whether an aligned period was exported completely.
    pub async fn period_done(&self, seg: &Segment) -> Result<bool, StateError> {
        Ok(self.read(&self.period_path(seg)).await?.is_some())
    }

    /// The aligned periods exported completely, oldest first.
    pub async fn load_periods(&self) -> Result<Vec<Segment>, StateError> {
        let mut out: Vec<Segment> = self
            .load_dir::<SegmentDoc>("periods")
            .await?
            .into_iter()
            .map(|d| d.segment)
            .collect();
        out.sort_by_key(|s| (s.export, s.id()));
        Ok(out)
    }

    /// Records an aligned period as complete.
    pub async fn save_period_done(&self, seg: &Segment) -> Result<(), StateError> {
        let doc = SegmentDoc {
            version: STATE_VERSION,
            segment: seg.clone(),
            created_at: chrono::Utc::now().to_rfc3339(),
        };
        self.write_doc(&self.period_path(seg), &doc).await
    }
}
