//! Where a table's current version is, and how a writer moves it: the
//! catalog's pointer where the table is in one ([`super::catalog_commit`]);
//! else the file-system layout's `metadata/v<N>.metadata.json`, each
//! written once with create-if-absent, and `version-hint.text` naming the
//! newest (see the invariants in [`super`]). Loads step forward from the
//! version this process last saw; a writer's first load looks for other
//! writers' metadata first ([`super::foreign`]).

use super::{Current, HINT_TMP_AGE, IcebergError, Table, TableMetadata, Written};
use crate::storage::Storage;
use std::sync::Arc;

impl Table {
    /// The table's metadata now, or `None` where no version was written.
    /// Starts from the last version this process saw (else the hint, else
    /// a listing) and steps forward while a next version exists.
    pub async fn load(&self, storage: &Storage) -> Result<Option<Arc<Current>>, IcebergError> {
        Ok(self.load_hinted(storage).await?.0)
    }

    /// [`Table::load`] for a writer about to commit: with a catalog, the
    /// version this process last read or wrote, where it has one (a
    /// commit asserts what it was made on, and one made on an older
    /// version is refused and made again on a reload); else a load.
    pub async fn load_cached(&self, storage: &Storage) -> Result<Option<Arc<Current>>, IcebergError> {
        if self.catalog.is_some()
            && let Some(c) = self.cached()
        {
            return Ok(Some(c));
        }
        self.load(storage).await
    }

    /// [`Table::load`] for a writer: where `version-hint.text` does not
    /// name the newest version (a writer died between writing a version
    /// and pointing the hint at it), the hint is pointed at it first, so
    /// readers that follow the hint are never left on an older table once
    /// anyone writes again.
    pub async fn load_to_write(&self, storage: &Storage) -> Result<Option<Arc<Current>>, IcebergError> {
        if self.catalog.is_none() && !self.foreign_checked.load(std::sync::atomic::Ordering::Relaxed) {
            self.settle_foreign(storage).await?;
            self.foreign_checked.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let (current, hint) = self.load_hinted(storage).await?;
        if self.catalog.is_some()
            && let Some(c) = &current
            && !self.foreign_checked.load(std::sync::atomic::Ordering::Relaxed)
        {
            self.check_catalog_current(storage, c).await?;
            self.foreign_checked.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        if let Some(c) = &current
            && self.catalog.is_none()
            && hint != Some(c.version)
        {
            tracing::info!(table = %self.rel, hinted = ?hint, version = c.version, "pointing the iceberg version hint at the newest metadata (a writer died between the two)");
            self.point_hint(storage, c.version).await?;
            // A writer that died there may have left its hint's temporary
            // file (local disk); one of a live writer is younger.
            storage
                .remove_old_leftovers(&[self.metadata_rel("")], Some(HINT_TMP_AGE), |name| {
                    name.starts_with("version-hint.text.") && name.ends_with(".tmp")
                })
                .await;
        }
        Ok(current)
    }

    /// Where `version-hint.text` lags the newest metadata version: what
    /// it names (`None`: nothing readable) and the newest. `None` where it
    /// names the newest, or there is no table.
    pub async fn hint_behind(&self, storage: &Storage) -> Result<Option<(Option<u64>, u64)>, IcebergError> {
        let (current, hint) = self.load_hinted(storage).await?;
        Ok(current.filter(|c| hint != Some(c.version)).map(|c| (hint, c.version)))
    }

    /// [`Table::load`], and what the hint named when last read in it.
    async fn load_hinted(&self, storage: &Storage) -> Result<(Option<Arc<Current>>, Option<u64>), IcebergError> {
        if let Some(catalog) = &self.catalog {
            // The catalog's pointer is the table's: no hint to follow.
            let current = self.catalog_load(catalog).await?;
            let version = current.as_ref().map(|c| c.version);
            return Ok((current, version));
        }
        let cached = self.last.lock().ok().and_then(|l| l.clone());
        let mut found = match cached {
            Some(c) => Some(c),
            None => match self.hinted(storage).await? {
                Some(v) => self.read_version(storage, v).await?.map(Arc::new),
                None => None,
            },
        };
        if found.is_none() {
            let Some(v) = self.listed_latest(storage).await? else {
                return Ok((None, None));
            };
            found = self.read_version(storage, v).await?.map(Arc::new);
        }
        let Some(mut current) = found else {
            // Listed a moment ago, deleted since: expired by a vacuum that
            // committed a newer version, which the listing now shows.
            let latest = match self.listed_latest(storage).await? {
                Some(v) => self.read_version(storage, v).await?.map(|c| self.remember(Arc::new(c))),
                None => None,
            };
            let hint = self.hinted(storage).await?;
            return Ok((latest, hint));
        };
        while let Some(next) = self.read_version(storage, current.version + 1).await? {
            current = Arc::new(next);
        }
        // Versions older than another writer's last 100 may be deleted by
        // its expiry: a version this process read long ago can have no
        // successor on storage and still not be the latest. The hint
        // (a listing where there is none) says, so a next version is never
        // written on a stale one, where it would land on a deleted number.
        let hint = self.hinted(storage).await?;
        let newer = match hint {
            Some(v) => Some(v).filter(|v| *v > current.version),
            None => self.listed_latest(storage).await?.filter(|v| *v > current.version),
        };
        if let Some(v) = newer
            && let Some(mut latest) = self.read_version(storage, v).await?.map(Arc::new)
        {
            while let Some(next) = self.read_version(storage, latest.version + 1).await? {
                latest = Arc::new(next);
            }
            current = latest;
        }
        Ok((Some(self.remember(current)), hint))
    }

    /// The newest `v<N>.metadata.json` of the folder (the hint's, stepped
    /// forward, else the listing's), read without this process's cache:
    /// what a catalog registers when it is added to a job whose tables
    /// the file-system layout kept.
    pub(crate) async fn folder_latest(&self, storage: &Storage) -> Result<Option<Current>, IcebergError> {
        let mut found = match self.hinted(storage).await? {
            Some(v) => self.read_version(storage, v).await?,
            None => None,
        };
        if found.is_none()
            && let Some(v) = self.listed_latest(storage).await?
        {
            found = self.read_version(storage, v).await?;
        }
        let Some(mut current) = found else { return Ok(None) };
        while let Some(next) = self.read_version(storage, current.version + 1).await? {
            current = next;
        }
        Ok(Some(current))
    }

    /// Deletes `version-hint.text`: a table a catalog now points at is
    /// not read through a hint that no longer moves.
    pub(crate) async fn drop_hint(&self, storage: &Storage) -> Result<(), IcebergError> {
        storage
            .delete(&self.metadata_rel("version-hint.text"))
            .await
            .map_err(|e| self.storage_error(e))
    }

    pub(super) fn remember(&self, c: Arc<Current>) -> Arc<Current> {
        // A catalog's answer is the table now; a folder's versions are
        // ordered by their numbers.
        if let Ok(mut l) = self.last.lock()
            && (self.catalog.is_some() || l.as_ref().is_none_or(|s| s.version <= c.version))
        {
            *l = Some(c.clone());
        }
        c
    }

    /// Version `v`'s metadata, if its file exists.
    async fn read_version(&self, storage: &Storage, v: u64) -> Result<Option<Current>, IcebergError> {
        let rel = self.metadata_rel(&format!("v{v}.metadata.json"));
        let Some(o) = storage.get(&rel).await.map_err(|e| self.storage_error(e))? else {
            return Ok(None);
        };
        let metadata = TableMetadata::parse(&o.bytes).map_err(|m| self.unreadable(&rel, m))?;
        Ok(Some(Current {
            version: v,
            metadata,
            metadata_location: None,
        }))
    }

    /// The version `version-hint.text` names, if it names one.
    async fn hinted(&self, storage: &Storage) -> Result<Option<u64>, IcebergError> {
        let rel = self.metadata_rel("version-hint.text");
        let hint = storage.get(&rel).await.map_err(|e| self.storage_error(e))?;
        Ok(hint.and_then(|o| std::str::from_utf8(&o.bytes).ok()?.trim().parse().ok()))
    }

    /// The highest version `metadata/` holds.
    async fn listed_latest(&self, storage: &Storage) -> Result<Option<u64>, IcebergError> {
        Ok(self.versions(storage).await?.into_iter().map(|(v, _)| v).max())
    }

    /// Every `v<N>.metadata.json` in `metadata/`: its version and path
    /// under the output root, with when it was written.
    pub(crate) async fn versions(&self, storage: &Storage) -> Result<Vec<(u64, object_store::ObjectMeta)>, IcebergError> {
        let listed = storage.list(&self.metadata_rel("")).await.map_err(|e| self.storage_error(e))?;
        Ok(listed
            .into_iter()
            .filter_map(|m| Some((version_of(m.location.filename()?)?, m)))
            .collect())
    }

    /// Writes `metadata` as the version after `base` (version 1 when
    /// none), unless another writer made that version first: then
    /// `Ok(None)` (as where a catalog's answer was lost: the caller
    /// reloads and makes its change again on what it finds). On success,
    /// points the hint at it.
    pub(crate) async fn write_version(
        &self,
        storage: &Storage,
        base: Option<&Current>,
        metadata: TableMetadata,
    ) -> Result<Option<Arc<Current>>, IcebergError> {
        Ok(match self.write_next(storage, base, metadata).await? {
            Written::Made(c) => Some(c),
            Written::Lost | Written::Unknown => None,
        })
    }

    /// [`Table::write_version`], saying whether a version not made may
    /// still be made (a catalog's answer lost): the files it names are
    /// then kept.
    pub(crate) async fn write_next(
        &self,
        storage: &Storage,
        base: Option<&Current>,
        metadata: TableMetadata,
    ) -> Result<Written, IcebergError> {
        if let Some(catalog) = &self.catalog {
            let Some(base) = base else {
                return Err(self.refused("a catalog's table is made by the catalog"));
            };
            return self.catalog_commit(catalog, base, &metadata).await;
        }
        Ok(match self.write_file_version(storage, base, metadata).await? {
            Some(c) => Written::Made(c),
            None => Written::Lost,
        })
    }

    /// [`Table::write_version`] in the file-system layout.
    pub(super) async fn write_file_version(
        &self,
        storage: &Storage,
        base: Option<&Current>,
        metadata: TableMetadata,
    ) -> Result<Option<Arc<Current>>, IcebergError> {
        let version = base.map_or(1, |b| b.version + 1);
        let rel = self.metadata_rel(&format!("v{version}.metadata.json"));
        let created = storage
            .create_if_absent(&rel, metadata.to_json())
            .await
            .map_err(|e| self.storage_error(e))?;
        if !created {
            return Ok(None);
        }
        let current = self.remember(Arc::new(Current {
            version,
            metadata,
            metadata_location: None,
        }));
        crate::util::failpoint::hit("table-version-written");
        self.point_hint(storage, version).await?;
        Ok(Some(current))
    }

    /// Points `version-hint.text` at `version`, then at any later version
    /// another writer made meanwhile (whose own hint this one may have
    /// overwritten). Part of the commit: readers that follow the hint
    /// (DuckDB's `iceberg_scan`, Spark's `HadoopCatalog`) see a version
    /// only once it names it, so a failure fails the commit's caller (the
    /// version is made; the next writer points the hint,
    /// [`Table::load_to_write`]).
    async fn point_hint(&self, storage: &Storage, mut version: u64) -> Result<(), IcebergError> {
        let rel = self.metadata_rel("version-hint.text");
        for _ in 0..3 {
            storage
                .put_atomic(&rel, version.to_string().into_bytes())
                .await
                .map_err(|e| self.storage_error(e))?;
            let mut later = version;
            while storage
                .exists(&self.metadata_rel(&format!("v{}.metadata.json", later + 1)))
                .await
                .map_err(|e| self.storage_error(e))?
            {
                later += 1;
            }
            if later == version {
                return Ok(());
            }
            version = later;
        }
        Ok(())
    }
}

/// The version of a metadata file named `v<N>.metadata.json`.
pub(crate) fn version_of(name: &str) -> Option<u64> {
    let digits = name.strip_prefix('v')?.strip_suffix(".metadata.json")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}
