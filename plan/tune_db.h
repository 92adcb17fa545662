/* tune_db.h - the schedule tuning database: the best schedule the auto-tuner (`bgnnc tune`)
 * measured for each (op key, graph key) on one GPU, kept in one text file per GPU and read
 * back by later compilations.  Keys and schedules are opaque strings to this module.
 *
 * ---- Where ------------------------------------------------------------------------------
 * <dir>/<gpu>_sm<NN>.tune, <gpu> the device name with every character outside [A-Za-z0-9_-]
 * turned into '_', runs of '_' collapsed and '_' trimmed at both ends ("NVIDIA H100 80GB HBM3",
 * 90 -> NVIDIA_H100_80GB_HBM3_sm90.tune).  <dir>: the one given, else $BGNN_TUNE_DIR, else
 * $XDG_CACHE_HOME/bgnn/tune, else $HOME/.cache/bgnn/tune (made with its parents on store).
 *
 * ---- The file (deterministic: the same records always give the same bytes) --------------
 *   bgnn-tune 1
 *   # gpu: NVIDIA H100 80GB HBM3, sm_90
 *   <op>\t<graph>\t<schedule>\t<best_us>\t<default_us>\t<samples>
 *   ...
 * Every line ends in '\n'.  One record a line, sorted by (op, graph) bytewise (strcmp on op,
 * then on graph), no two with the same key.  op, graph and schedule are non-empty printable
 * ASCII (0x20..0x7e: spaces allowed, no TAB); best_us and default_us decimals written "%.3f"
 * (read back as digits, optionally '.' and digits; 0.0005 at least, which "%.3f" writes
 * 0.001); samples a positive integer (at most INT64_MAX).  At most BG_TUNE_MAX_FILE bytes
 * in all and BG_TUNE_MAX_LINE bytes a line (without its '\n').
 * Numbers are written and read in the C locale whatever the process's locale.
 *
 * ---- Loading: the database is a cache, so a bad file never stops anyone ------------------
 * A missing file is an empty database, without a diagnostic.  A file that cannot be read or
 * fails any check (header, "# gpu:" line, field count, a number, order, a duplicate key, a
 * NUL byte, a line or the file over its limit, no '\n' at the end) gives ONE warning
 * (BG_E_FORMAT, or BG_E_IO when it cannot be read) "PATH:LINE: what is wrong; ..." ("PATH:
 * ..." for the file's size and for reading) and the whole file is ignored.
 *
 * ---- Storing: merge under a lock, replace atomically -------------------------------------
 * bg_tune_db_store makes the directory, takes flock(LOCK_EX) on PATH.lock (blocking; the
 * lock file stays), reads the current file (a corrupt one: warning, start from empty),
 * replaces the records with the keys given and adds the new ones, writes the whole file to
 * PATH.tmp.PID (base's atomic helpers), fflush + fsync, renames it over PATH and unlocks.
 * The directory is not fsynced: after a power loss the rename may be lost, which leaves the
 * old file whole (a cache can afford it).  Writers that die at any point leave the old or the
 * new file whole (the kernel drops their lock); their PATH.tmp.<digits> files are removed by
 * the next store (under the lock, so never a live one) and loads never look at them.
 * Concurrent stores from any number of processes or threads serialise on the lock and lose
 * no record. */
#ifndef BG_TUNE_DB_H
#define BG_TUNE_DB_H

#include "base.h"

#define BG_TUNE_MAX_FILE (64u << 20) /* bytes of a .tune file */
#define BG_TUNE_MAX_LINE (64u << 10) /* bytes of one line, without its '\n' */

typedef struct BgTuneRecord {
    const char *op;      /* op key (opaque) */
    const char *graph;   /* graph key (opaque) */
    const char *sched;   /* the best schedule found (opaque) */
    double best_us;      /* its time, microseconds */
    double default_us;   /* the default schedule's time, microseconds */
    int64_t samples;     /* timed runs behind best_us */
} BgTuneRecord;

typedef struct BgTuneDb BgTuneDb;

/* The database file of a GPU: malloc'd "<dir>/<sanitised gpu_name>_sm<sm>.tune".  dir NULL
 * or "" follows the environment rule above.  NULL when no directory can be determined (none
 * of the variables set), or gpu_name is NULL, or sm < 0.  An empty sanitised name is
 * "unknown"; it is cut to 200 characters. */
char *bg_tune_db_path(const char *dir, const char *gpu_name, int sm);

/* The records of the file at path (see "Loading"): never NULL but on allocation failure.
 * The database owns its strings. */
BgTuneDb *bg_tune_db_load(const char *path, BgDiagSink *d);

/* The record of exactly (op, graph), or NULL. */
const BgTuneRecord *bg_tune_db_find(const BgTuneDb *db, const char *op, const char *graph);

/* Listing: count records, in file order (sorted by (op, graph)); at(i) NULL out of range. */
int bg_tune_db_count(const BgTuneDb *db);
const BgTuneRecord *bg_tune_db_at(const BgTuneDb *db, int i);

/* The GPU named by the file's "# gpu:" line and its sm (through sm when not NULL); NULL (and
 * sm -1) for a database loaded from no file or an ignored one. */
const char *bg_tune_db_gpu(const BgTuneDb *db, int *sm);

/* Merges recs[0..n) into the file at path (see "Storing"); the "# gpu:" line becomes
 * gpu_name (characters outside printable ASCII written '?') and sm.  Refuses, writing
 * nothing, with one BG_E_WRITE error per bad record: a key or schedule NULL, empty or not
 * printable ASCII (a TAB, a newline), a time not finite or below 0.0005 (which "%.3f" would
 * write as 0.000), samples < 1, a line over BG_TUNE_MAX_LINE; also gpu_name NULL or sm < 0.
 * Among recs with the same key the last one wins.  false (with an error: BG_E_WRITE, BG_E_IO
 * when the current file cannot be read, BG_E_LIMIT when the result would be over
 * BG_TUNE_MAX_FILE, or a record kept from the file, its numbers written anew, over
 * BG_TUNE_MAX_LINE) when nothing was stored; n == 0 rewrites the file as it is. */
bool bg_tune_db_store(const char *path, const BgTuneRecord *recs, int n, const char *gpu_name,
                      int sm, BgDiagSink *d);

void bg_tune_db_free(BgTuneDb *db);

#endif /* BG_TUNE_DB_H */
