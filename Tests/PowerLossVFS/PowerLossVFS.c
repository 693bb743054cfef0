// See include/PowerLossVFS.h. Written for these tests after reading SQLite's src/test6.c (its
// crash VFS); none of its code is copied.
#include "PowerLossVFS.h"
#include <sqlite3.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

// One unsynced write: where, the bytes it wrote, the bytes it overwrote, the size before.
typedef struct Pending {
    char *path;
    sqlite3_int64 offset;
    int length;
    unsigned char *written;
    unsigned char *overwritten; // `overwrittenLength` bytes (less than length past the old end)
    int overwrittenLength;
    sqlite3_int64 sizeBefore;
    int isTruncate;             // a truncation to `offset` (length 0, nothing written)
    struct Pending *next;       // older to newer
} Pending;

typedef struct PLFile {
    sqlite3_file base;
    sqlite3_file *real;         // allocated right after this struct
    char *path;                 // NULL for files without a name (temp files)
} PLFile;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *realVFS;
static sqlite3_vfs vfs;
static int registered;
static int64_t ioCount, cutAt, dropped;
static int cutMode, didCut, deviceCharacteristics;
static uint64_t rngState;
static Pending *head, *tail;

static uint64_t nextRandom(void) { // splitmix64
    uint64_t z = (rngState += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void freePending(Pending *p) { free(p->path); free(p->written); free(p->overwritten); free(p); }

static void forgetAll(void) {
    while (head) { Pending *n = head->next; freePending(head); head = n; }
    tail = NULL;
}

static void forgetPath(const char *path) { // the file's writes are now durable
    Pending **link = &head; tail = NULL;
    while (*link) {
        Pending *p = *link;
        if (strcmp(p->path, path) == 0) { *link = p->next; freePending(p); }
        else { tail = p; link = &p->next; }
    }
}

static void rawWrite(int fd, const unsigned char *bytes, int length, sqlite3_int64 offset) {
    while (length > 0) {
        ssize_t n = pwrite(fd, bytes, (size_t)length, (off_t)offset);
        if (n <= 0) return;
        bytes += n; length -= (int)n; offset += n;
    }
}

// The power cut, with the lock held: undo every pending write newest first (restoring the
// synced state byte for byte), then redo the ones that "reached the disk" oldest first.
static void cutPower(void) {
    didCut = 1;
    int count = 0;
    for (Pending *p = head; p; p = p->next) count++;
    Pending **list = count ? malloc(sizeof(Pending *) * (size_t)count) : NULL;
    int i = 0;
    for (Pending *p = head; p; p = p->next) list[i++] = p;
    for (i = count - 1; i >= 0; i--) {
        Pending *p = list[i];
        int fd = open(p->path, O_RDWR);
        if (fd < 0) continue;
        // A truncation's cut-off bytes come back (and with them the size); a write's
        // overwritten bytes too, and a write past the old end is cut back.
        rawWrite(fd, p->overwritten, p->overwrittenLength, p->offset);
        if (!p->isTruncate && p->sizeBefore < p->offset + p->length) (void)ftruncate(fd, (off_t)p->sizeBefore);
        close(fd);
    }
    for (i = 0; i < count; i++) {
        Pending *p = list[i];
        int last = i == count - 1;
        if (p->isTruncate) { // reached the disk, or not: whole
            int keep = cutMode == POWERLOSS_DROP_RANDOM ? (int)(nextRandom() & 1) : (cutMode == POWERLOSS_TEAR_LAST && !last);
            if (!keep) { dropped++; continue; }
            int fd = open(p->path, O_RDWR);
            if (fd < 0) continue;
            (void)ftruncate(fd, (off_t)p->offset);
            close(fd);
            continue;
        }
        int length = 0;
        if (cutMode == POWERLOSS_DROP_RANDOM) length = (nextRandom() & 1) ? p->length : 0;
        else if (cutMode == POWERLOSS_TEAR_LAST && !last) length = p->length;
        else if (cutMode == POWERLOSS_TEAR_LAST) {
            // Torn at a sector boundary of the file (512-byte sectors from its start), strictly
            // inside the write: the sectors before it reached the disk, the rest did not. A
            // write inside one sector cannot tear: it is lost whole.
            sqlite3_int64 first = (p->offset / 512 + 1) * 512, end = p->offset + p->length;
            sqlite3_int64 boundaries = first < end ? (end - 1 - first) / 512 + 1 : 0;
            if (boundaries > 0) length = (int)(first + (sqlite3_int64)(nextRandom() % (uint64_t)boundaries) * 512 - p->offset);
        }
        if (length < p->length) dropped++;
        if (length == 0) continue;
        int fd = open(p->path, O_RDWR);
        if (fd < 0) continue;
        rawWrite(fd, p->written, length, p->offset);
        close(fd);
    }
    free(list);
    forgetAll();
}

// Counts one I/O; returns 1 if the power is (now) off.
static int countIO(void) {
    if (didCut) return 1;
    ioCount++;
    if (cutAt > 0 && ioCount >= cutAt) { cutPower(); return 1; }
    return 0;
}

static int isOff(void) {
    pthread_mutex_lock(&lock);
    int off = didCut;
    pthread_mutex_unlock(&lock);
    return off;
}

#define REAL(f) (((PLFile *)(f))->real)

static int plClose(sqlite3_file *f) {
    PLFile *file = (PLFile *)f;
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    free(file->path); // its pending writes stay: closing a file does not sync it
    file->path = NULL;
    return rc;
}

static int plRead(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    if (isOff()) return SQLITE_IOERR_READ;
    return REAL(f)->pMethods->xRead(REAL(f), buffer, amount, offset);
}

static int plWrite(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    PLFile *file = (PLFile *)f;
    pthread_mutex_lock(&lock);
    if (countIO()) { pthread_mutex_unlock(&lock); return SQLITE_IOERR_WRITE; }
    if (file->path) {
        Pending *p = calloc(1, sizeof(Pending));
        sqlite3_int64 size = 0;
        int rc = REAL(f)->pMethods->xFileSize(REAL(f), &size);
        if (!p || rc != SQLITE_OK) { free(p); pthread_mutex_unlock(&lock); return SQLITE_IOERR_WRITE; }
        p->path = strdup(file->path);
        p->offset = offset;
        p->length = amount;
        p->sizeBefore = size;
        p->written = malloc((size_t)amount);
        memcpy(p->written, buffer, (size_t)amount);
        sqlite3_int64 available = size - offset;
        p->overwrittenLength = available <= 0 ? 0 : (available < amount ? (int)available : amount);
        p->overwritten = malloc((size_t)(p->overwrittenLength ? p->overwrittenLength : 1));
        if (p->overwrittenLength) {
            rc = REAL(f)->pMethods->xRead(REAL(f), p->overwritten, p->overwrittenLength, offset);
            if (rc != SQLITE_OK) { freePending(p); pthread_mutex_unlock(&lock); return SQLITE_IOERR_WRITE; }
        }
        if (tail) tail->next = p; else head = p;
        tail = p;
    }
    int rc = REAL(f)->pMethods->xWrite(REAL(f), buffer, amount, offset);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int plTruncate(sqlite3_file *f, sqlite3_int64 size) {
    PLFile *file = (PLFile *)f;
    pthread_mutex_lock(&lock);
    if (didCut) { pthread_mutex_unlock(&lock); return SQLITE_IOERR_TRUNCATE; }
    if (file->path) { // pending until the next sync, with the bytes it cuts off
        sqlite3_int64 before = 0;
        int rc = REAL(f)->pMethods->xFileSize(REAL(f), &before);
        if (rc != SQLITE_OK) { pthread_mutex_unlock(&lock); return SQLITE_IOERR_TRUNCATE; }
        if (before > size) {
            Pending *p = calloc(1, sizeof(Pending));
            if (!p) { pthread_mutex_unlock(&lock); return SQLITE_IOERR_TRUNCATE; }
            p->path = strdup(file->path);
            p->offset = size;
            p->isTruncate = 1;
            p->sizeBefore = before;
            p->overwrittenLength = (int)(before - size);
            p->overwritten = malloc((size_t)p->overwrittenLength);
            p->written = NULL;
            if (!p->overwritten || REAL(f)->pMethods->xRead(REAL(f), p->overwritten, p->overwrittenLength, size) != SQLITE_OK) {
                freePending(p); pthread_mutex_unlock(&lock); return SQLITE_IOERR_TRUNCATE;
            }
            if (tail) tail->next = p; else head = p;
            tail = p;
        }
    }
    int rc = REAL(f)->pMethods->xTruncate(REAL(f), size);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int plSync(sqlite3_file *f, int flags) {
    PLFile *file = (PLFile *)f;
    pthread_mutex_lock(&lock);
    if (countIO()) { pthread_mutex_unlock(&lock); return SQLITE_IOERR_FSYNC; }
    int rc = REAL(f)->pMethods->xSync(REAL(f), flags);
    if (rc == SQLITE_OK && file->path) forgetPath(file->path);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int plFileSize(sqlite3_file *f, sqlite3_int64 *size) {
    if (isOff()) return SQLITE_IOERR_FSTAT;
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int plLock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int plUnlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int plCheckReservedLock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int plFileControl(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int plSectorSize(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int plDeviceCharacteristics(sqlite3_file *f) {
    // A plain disk (0) or what the unix VFS reports by default (powersafe overwrite); never
    // atomic or safe-append writes. See powerloss_set_device_characteristics.
    (void)f;
    pthread_mutex_lock(&lock);
    int characteristics = deviceCharacteristics;
    pthread_mutex_unlock(&lock);
    return characteristics;
}
static int plShmMap(sqlite3_file *f, int region, int size, int extend, void volatile **out) {
    return REAL(f)->pMethods->xShmMap(REAL(f), region, size, extend, out);
}
static int plShmLock(sqlite3_file *f, int offset, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags); }
static void plShmBarrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int plShmUnmap(sqlite3_file *f, int deleteFlag) { return REAL(f)->pMethods->xShmUnmap(REAL(f), deleteFlag); }

// Version 2: shared memory (WAL) but no memory-mapped I/O, so every page write is an xWrite.
static const sqlite3_io_methods methods = {
    2, plClose, plRead, plWrite, plTruncate, plSync, plFileSize, plLock, plUnlock,
    plCheckReservedLock, plFileControl, plSectorSize, plDeviceCharacteristics,
    plShmMap, plShmLock, plShmBarrier, plShmUnmap, 0, 0,
};

static int plOpen(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *outFlags) {
    (void)v;
    PLFile *file = (PLFile *)f;
    memset(file, 0, sizeof(PLFile));
    if (isOff()) return SQLITE_CANTOPEN;
    file->real = (sqlite3_file *)(file + 1);
    int rc = realVFS->xOpen(realVFS, name, file->real, flags, outFlags);
    if (rc != SQLITE_OK) { file->real->pMethods = NULL; return rc; }
    file->path = name ? strdup(name) : NULL;
    file->base.pMethods = &methods;
    return SQLITE_OK;
}

static int plDelete(sqlite3_vfs *v, const char *name, int syncDir) {
    (void)v;
    pthread_mutex_lock(&lock);
    if (didCut) { pthread_mutex_unlock(&lock); return SQLITE_IOERR_DELETE; }
    int rc = realVFS->xDelete(realVFS, name, syncDir);
    forgetPath(name); // a deleted file's writes no longer matter (treated as durable)
    pthread_mutex_unlock(&lock);
    return rc;
}

static int plAccess(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return realVFS->xAccess(realVFS, name, flags, out); }
static int plFullPathname(sqlite3_vfs *v, const char *name, int n, char *out) { (void)v; return realVFS->xFullPathname(realVFS, name, n, out); }
static void *plDlOpen(sqlite3_vfs *v, const char *name) { (void)v; return realVFS->xDlOpen(realVFS, name); }
static void plDlError(sqlite3_vfs *v, int n, char *out) { (void)v; realVFS->xDlError(realVFS, n, out); }
static void (*plDlSym(sqlite3_vfs *v, void *handle, const char *symbol))(void) { (void)v; return realVFS->xDlSym(realVFS, handle, symbol); }
static void plDlClose(sqlite3_vfs *v, void *handle) { (void)v; realVFS->xDlClose(realVFS, handle); }
static int plRandomness(sqlite3_vfs *v, int n, char *out) { (void)v; return realVFS->xRandomness(realVFS, n, out); }
static int plSleep(sqlite3_vfs *v, int micros) { (void)v; return realVFS->xSleep(realVFS, micros); }
static int plCurrentTime(sqlite3_vfs *v, double *out) { (void)v; return realVFS->xCurrentTime(realVFS, out); }
static int plGetLastError(sqlite3_vfs *v, int n, char *out) { (void)v; return realVFS->xGetLastError ? realVFS->xGetLastError(realVFS, n, out) : 0; }
static int plCurrentTimeInt64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return realVFS->xCurrentTimeInt64(realVFS, out); }

int powerloss_register(const char *name) {
    pthread_mutex_lock(&lock);
    if (registered) { pthread_mutex_unlock(&lock); return SQLITE_OK; }
    realVFS = sqlite3_vfs_find(NULL);
    if (!realVFS) { pthread_mutex_unlock(&lock); return SQLITE_ERROR; }
    memset(&vfs, 0, sizeof vfs);
    vfs.iVersion = 2;
    vfs.szOsFile = (int)sizeof(PLFile) + realVFS->szOsFile;
    vfs.mxPathname = realVFS->mxPathname;
    vfs.zName = strdup(name); // lives as long as the process (the VFS stays registered)
    vfs.xOpen = plOpen; vfs.xDelete = plDelete; vfs.xAccess = plAccess; vfs.xFullPathname = plFullPathname;
    vfs.xDlOpen = plDlOpen; vfs.xDlError = plDlError; vfs.xDlSym = plDlSym; vfs.xDlClose = plDlClose;
    vfs.xRandomness = plRandomness; vfs.xSleep = plSleep; vfs.xCurrentTime = plCurrentTime;
    vfs.xGetLastError = plGetLastError; vfs.xCurrentTimeInt64 = plCurrentTimeInt64;
    int rc = sqlite3_vfs_register(&vfs, 0);
    if (rc == SQLITE_OK) registered = 1;
    pthread_mutex_unlock(&lock);
    return rc;
}

void powerloss_reset(void) {
    pthread_mutex_lock(&lock);
    forgetAll();
    ioCount = 0; cutAt = 0; dropped = 0; didCut = 0;
    pthread_mutex_unlock(&lock);
}

void powerloss_arm(int64_t at, int mode, uint64_t seed) {
    pthread_mutex_lock(&lock);
    cutAt = at; cutMode = mode; rngState = seed;
    pthread_mutex_unlock(&lock);
}

int64_t powerloss_io_count(void) { pthread_mutex_lock(&lock); int64_t n = ioCount; pthread_mutex_unlock(&lock); return n; }
int powerloss_did_cut(void) { return isOff(); }
void powerloss_set_device_characteristics(int characteristics) {
    pthread_mutex_lock(&lock);
    deviceCharacteristics = characteristics;
    pthread_mutex_unlock(&lock);
}

int64_t powerloss_dropped_writes(void) { pthread_mutex_lock(&lock); int64_t n = dropped; pthread_mutex_unlock(&lock); return n; }
