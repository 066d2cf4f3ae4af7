#!/usr/bin/env python3
"""Reads a sandbox-fleet archive with nothing but the Python standard library.

A second implementation of docs/archive-format.md, written from the document alone: it lists and
extracts a revision of either format straight from an archive root (`FLEET_ARCHIVE_ROOT`),
without Redis and without the fleet's code.

    read-archive.py ROOT WORKSPACE revisions            every revision, oldest first, and its format
    read-archive.py ROOT WORKSPACE list [--json]        every path of a revision (current by default)
    read-archive.py ROOT WORKSPACE extract DEST         the revision as a tree in DEST (new or empty)

`--revision R` picks another revision than the one `current` points at. `list --json` prints
the revision's entries in the fleet's manifest shape (`p`, `t`, `m`, `s`, `h`, `l`, `n`), in the
fleet's walk order. `extract` checks every tree and object against its id while it reads, keeps
names as bytes, modes, nanosecond times, symlinks (never followed), FIFOs, hard links and holes
(all-zero 4 KiB blocks are left unwritten). Exit status: 0, 1 on a damaged or missing revision,
2 on bad arguments.
"""

import argparse
import base64
import hashlib
import io
import json
import os
import re
import stat
import struct
import sys

WORKSPACE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
REVISION_ID = re.compile(r"^r\d{8}T\d{9}Z-g\d+-[a-z0-9]{6}$")
OBJECT_ID = re.compile(r"^[0-9a-f]{64}$")
TIME = re.compile(r"^-?\d{1,25}$")
RECORD_SUFFIX = ".rev.json"
MANIFEST_SUFFIX = ".manifest.json"
BLOCK = 4096
CHUNK = 1024 * 1024
NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class ArchiveError(Exception):
    """The archive does not hold what the format says it must (missing, damaged, foreign)."""


# --- names -----------------------------------------------------------------------------------

def decode_name(text):
    """A JSON name or target back into bytes: `b64:` + base64, else UTF-8."""
    if not isinstance(text, str):
        raise ArchiveError("name is not a string: %r" % (text,))
    if text.startswith("b64:"):
        return base64.b64decode(text[4:], validate=True)
    return text.encode("utf-8")


def encode_name(raw):
    """Bytes as the fleet writes them in JSON: UTF-8 text when valid and not `b64:`-prefixed."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and not text.startswith("b64:"):
        return text
    return "b64:" + base64.b64encode(raw).decode("ascii")


def check_component(name):
    """A name of a tree entry must be one path component."""
    if not name or b"/" in name or b"\0" in name or name in (b".", b".."):
        raise ArchiveError("not a single path component: %r" % (name,))
    return name


def join(parent, name):
    return name if not parent else parent + b"/" + name


# --- format 2 --------------------------------------------------------------------------------

class Store:
    """The shared objects and trees under ROOT/.store."""

    def __init__(self, root):
        self.root = root
        self._packed = None

    def object_path(self, oid):
        return os.path.join(self.root, ".store", "objects", oid[:2], oid)

    def open_object(self, oid):
        """The object's content as a binary file: its own file, else its slice of a pack."""
        try:
            return open(self.object_path(oid), "rb", opener=read_opener)
        except FileNotFoundError:
            pass
        if self._packed is None:
            self._packed = read_pack_indexes(os.path.join(self.root, ".store", "packs"))
        found = self._packed.get(oid)
        if found is None:
            raise ArchiveError("object %s is missing" % oid)
        pack, offset, length = found
        with open(pack, "rb", opener=read_opener) as f:
            f.seek(offset)
            data = f.read(length)
        if len(data) != length:
            raise ArchiveError("pack %s ends inside object %s" % (pack, oid))
        return io.BytesIO(data)

    def _tree_bytes(self, tid):
        if not OBJECT_ID.match(tid):
            raise ArchiveError("not a tree id: %r" % (tid,))
        path = os.path.join(self.root, ".store", "trees", tid[:2], tid)
        try:
            with open(path, "rb") as f:
                return f.read()
        except FileNotFoundError:
            raise ArchiveError("tree %s is missing" % tid) from None

    def read_tree(self, tid):
        """A tree's entries, checked against its id; a tree stored as a patch is applied to its base first."""
        data = self._tree_bytes(tid)
        body = parse_json(data, tid)
        if data.startswith(PATCH_PREFIX):
            if set(body) != {"v", "b", "e", "r"} or body["v"] != 2 or not isinstance(body["b"], str) or not OBJECT_ID.match(body["b"]) \
                    or not isinstance(body["e"], list) or not isinstance(body["r"], list):
                raise ArchiveError("tree %s is not a format 2 tree patch" % tid)
            base_id = body["b"]
            try:
                base_data = self._tree_bytes(base_id)
            except ArchiveError:
                raise ArchiveError("tree %s is a patch of %s, which is missing" % (tid, base_id)) from None
            if base_data.startswith(PATCH_PREFIX):
                raise ArchiveError("tree %s is a patch of %s, which is itself a patch" % (tid, base_id))
            if hashlib.sha256(base_data).hexdigest() != base_id:
                raise ArchiveError("tree %s (the base of %s) does not match its id" % (base_id, tid))
            raw = apply_patch(whole_entries(parse_json(base_data, base_id), base_id), body["e"], body["r"], tid)
            # The id is the SHA-256 of the whole tree's canonical bytes (JSON.stringify's form).
            data = json.dumps({"v": 2, "e": raw}, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        else:
            raw = whole_entries(body, tid)
        if hashlib.sha256(data).hexdigest() != tid:
            raise ArchiveError("tree %s does not match its id" % tid)
        entries = [parse_entry(e) for e in raw]
        check_sorted([e["name"] for e in entries], "tree %s: entries are not sorted by name bytes and unique" % tid)
        return entries


PATCH_PREFIX = b'{"v":2,"b":"'


def parse_json(data, tid):
    try:
        body = json.loads(data.decode("utf-8"))
    except ValueError:
        raise ArchiveError("tree %s is not JSON" % tid) from None
    if not isinstance(body, dict):
        raise ArchiveError("tree %s is not a format 2 tree" % tid)
    return body


def whole_entries(body, tid):
    """The raw entries of a tree stored whole."""
    if body.get("v") != 2 or not isinstance(body.get("e"), list) or "b" in body:
        raise ArchiveError("tree %s is not a format 2 tree" % tid)
    return body["e"]


def check_sorted(names, message):
    if any(a >= b for a, b in zip(names, names[1:])):
        raise ArchiveError(message)


def apply_patch(base, set_entries, removed, tid):
    """The raw entries of `base` with a patch applied (`set_entries` added or replacing by name, `removed` names gone)."""
    by_name = {}
    for raw in base:
        if not isinstance(raw, list) or not raw:
            raise ArchiveError("bad tree entry %r" % (raw,))
        by_name[check_component(decode_name(raw[0]))] = raw
    set_names = []
    for raw in set_entries:
        if not isinstance(raw, list) or not raw:
            raise ArchiveError("bad tree entry %r" % (raw,))
        set_names.append(check_component(decode_name(raw[0])))
    gone = [check_component(decode_name(n)) if isinstance(n, str) else None for n in removed]
    if None in gone:
        raise ArchiveError("tree %s: bad removed name" % tid)
    check_sorted(set_names, "tree %s: patch entries are not sorted by name bytes and unique" % tid)
    check_sorted(gone, "tree %s: removed names are not sorted by name bytes and unique" % tid)
    for name in gone:
        if name not in by_name or name in set_names:
            raise ArchiveError("tree %s: the patch removes %r, which its base lacks or it also sets" % (tid, name))
        del by_name[name]
    for name, raw in zip(set_names, set_entries):
        by_name[name] = raw
    return [by_name[name] for name in sorted(by_name)]


def is_mode(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0o7777


def parse_entry(raw):
    """One tree entry (a JSON array) as a dict; raises ArchiveError on anything else."""
    if not isinstance(raw, list) or len(raw) < 4:
        raise ArchiveError("bad tree entry %r" % (raw,))
    name = check_component(decode_name(raw[0]))
    kind, mode = raw[1], raw[2]
    if kind == "f" and len(raw) in (6, 7) and is_mode(mode) and isinstance(raw[3], int) and raw[3] >= 0 \
            and isinstance(raw[4], str) and OBJECT_ID.match(raw[4]) and isinstance(raw[5], str) and TIME.match(raw[5]):
        link_key = raw[6] if len(raw) == 7 else None
        if link_key is not None and not isinstance(link_key, str):
            raise ArchiveError("bad linkKey %r" % (link_key,))
        return {"name": name, "t": "f", "m": mode, "s": raw[3], "h": raw[4], "n": int(raw[5]), "link": link_key}
    if kind == "d" and len(raw) == 4 and is_mode(mode) and isinstance(raw[3], str) and OBJECT_ID.match(raw[3]):
        return {"name": name, "t": "d", "m": mode, "tree": raw[3]}
    if kind == "l" and len(raw) == 4 and mode == 0:
        return {"name": name, "t": "l", "m": 0, "target": decode_name(raw[3])}
    if kind == "p" and len(raw) == 4 and is_mode(mode) and isinstance(raw[3], str) and TIME.match(raw[3]):
        return {"name": name, "t": "p", "m": mode, "n": int(raw[3])}
    raise ArchiveError("bad tree entry %r" % (raw,))


def walk_trees(store, root):
    """(path, entry) for every entry below the root tree: a directory's entries, then each subdirectory's."""
    pending = [(root, b"")]
    while pending:
        tid, rel = pending.pop(0)
        subdirs = []
        for entry in store.read_tree(tid):
            path = join(rel, entry["name"])
            yield path, entry
            if entry["t"] == "d":
                subdirs.append((entry["tree"], path))
        # Depth first, in name order: the subdirectories of this directory come next.
        pending[0:0] = subdirs


def manifest_entry(path, entry):
    """An entry in the fleet's manifest shape."""
    out = {"p": encode_name(path), "t": entry["t"], "m": entry["m"]}
    if entry["t"] == "f":
        out.update(s=entry["s"], h=entry["h"], n=str(entry["n"]))
    elif entry["t"] == "l":
        out["l"] = encode_name(entry["target"])
    elif entry["t"] == "p":
        out["n"] = str(entry["n"])
    return out


# --- the archive -----------------------------------------------------------------------------

class Archive:
    def __init__(self, root, workspace):
        if not WORKSPACE_ID.match(workspace):
            raise ValueError("not a workspace id: %r" % workspace)
        self.root = root
        self.workspace = workspace
        self.revs = os.path.join(root, workspace, "revs")
        self.store = Store(root)

    def current(self):
        try:
            target = os.readlink(os.path.join(self.root, self.workspace, "current"))
        except FileNotFoundError:
            return None
        name = target[len("revs/"):] if target.startswith("revs/") else ""
        if name.endswith(RECORD_SUFFIX):
            name = name[: -len(RECORD_SUFFIX)]
        if not REVISION_ID.match(name):
            raise ArchiveError("current points at %r, not at a revision" % target)
        return name

    def revisions(self):
        """{revision: format} of committed revisions; a record (format 2) wins over a directory."""
        try:
            names = set(os.listdir(self.revs))
        except FileNotFoundError:
            return {}
        found = {}
        for name in names:
            if name.endswith(RECORD_SUFFIX) and REVISION_ID.match(name[: -len(RECORD_SUFFIX)]):
                found[name[: -len(RECORD_SUFFIX)]] = 2
        for name in names:
            if REVISION_ID.match(name) and name + MANIFEST_SUFFIX in names:
                found.setdefault(name, 1)
        return dict(sorted(found.items()))

    def open_revision(self, revision):
        if revision is None:
            revision = self.current()
            if revision is None:
                raise ArchiveError("workspace %s has no current revision" % self.workspace)
        if not REVISION_ID.match(revision):
            raise ValueError("not a revision id: %r" % revision)
        fmt = self.revisions().get(revision)
        if fmt == 2:
            with open(os.path.join(self.revs, revision + RECORD_SUFFIX), "rb") as f:
                record = json.loads(f.read().decode("utf-8"))
            if record.get("format") != 2 or record.get("revision") != revision or record.get("workspaceId") != self.workspace:
                raise ArchiveError("record of %s does not describe it" % revision)
            return Format2(self.store, record)
        if fmt == 1:
            return Format1(os.path.join(self.revs, revision), os.path.join(self.revs, revision + MANIFEST_SUFFIX))
        raise ArchiveError("workspace %s has no committed revision %s" % (self.workspace, revision))


class Format2:
    format = 2

    def __init__(self, store, record):
        self.store = store
        self.record = record

    def entries(self):
        return [manifest_entry(p, e) for p, e in walk_trees(self.store, self.record["root"])]

    def extract(self, dest_fd):
        out = Writer(dest_fd)
        stack = []
        try:
            # Depth first with one open descriptor per level: (descriptor, subdirectories left).
            stack.append(self._directory(out, self.record["root"], b"", dest_fd))
            while stack:
                fd, subdirs = stack[-1]
                sub = next(subdirs, None)
                if sub is None:
                    stack.pop()
                    if fd != dest_fd:
                        os.close(fd)
                    continue
                name, tree, path = sub
                stack.append(self._directory(out, tree, path, open_dir(name, fd)))
        finally:
            close_stack(stack, dest_fd)
        out.finish()

    def _directory(self, out, tree, rel, fd):
        subdirs = []
        for entry in self.store.read_tree(tree):
            name, path, kind = entry["name"], join(rel, entry["name"]), entry["t"]
            if kind == "d":
                out.directory(fd, name, path, entry["m"], None)
                subdirs.append((name, entry["tree"], path))
            elif kind == "l":
                os.symlink(entry["target"], name, dir_fd=fd)
            elif kind == "p":
                make_fifo(fd, name, entry["m"], entry["n"])
            elif not out.link(entry["link"], fd, name):
                with self.store.open_object(entry["h"]) as src:
                    copy_file(src, fd, name, entry["s"], entry["m"], entry["n"], entry["h"])
                out.linkable(entry["link"], path)
        return fd, iter(subdirs)


class Format1:
    format = 1

    def __init__(self, directory, manifest):
        self.directory = directory
        with open(manifest, "rb") as f:
            self.manifest = json.loads(f.read().decode("utf-8"))
        # The directory's files carry their time as Node set it (cut to microseconds), a FIFO the
        # time it was made; the manifest's `n` is the exact time the live entry had.
        self.times = {e["p"]: int(e["n"]) for e in self.manifest["entries"] if "n" in e}

    def entries(self):
        keys = ("p", "t", "m", "s", "h", "l", "n")
        return [{k: e[k] for k in keys if k in e} for e in self.manifest["entries"]]

    def extract(self, dest_fd):
        """Copies the revision's directory, walked by descriptors (nothing followed)."""
        out = Writer(dest_fd)
        src_root = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW)
        stack = []
        try:
            # Frames: (source descriptor, target descriptor, subdirectories left).
            stack.append(self._directory(out, src_root, dest_fd, b""))
            while stack:
                src_fd, fd, subdirs = stack[-1]
                sub = next(subdirs, None)
                if sub is None:
                    stack.pop()
                    if fd != dest_fd:
                        os.close(fd)
                        os.close(src_fd)
                    continue
                name, path = sub
                child_src = open_dir(name, src_fd)
                try:
                    child = open_dir(name, fd)
                except OSError:
                    os.close(child_src)
                    raise
                stack.append(self._directory(out, child_src, child, path))
        finally:
            for src_fd, fd, _ in stack:
                if fd != dest_fd:
                    os.close(fd)
                    os.close(src_fd)
            os.close(src_root)
        out.finish()

    def _directory(self, out, src_fd, fd, rel):
        subdirs = []
        # Inodes are shared across format 1 revisions: only names met in this walk are links here.
        for name in sorted(os.fsencode(n) for n in os.listdir(src_fd)):
            path = join(rel, name)
            st = os.lstat(name, dir_fd=src_fd)
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                out.directory(fd, name, path, mode, st.st_mtime_ns)
                subdirs.append((name, path))
            elif stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(name, dir_fd=src_fd), name, dir_fd=fd)
            elif stat.S_ISFIFO(st.st_mode):
                make_fifo(fd, name, mode, self.times.get(encode_name(path), st.st_mtime_ns))
            elif stat.S_ISREG(st.st_mode):
                key = st.st_ino if st.st_nlink > 1 else None
                if out.link(key, fd, name):
                    continue
                with open(os.open(name, os.O_RDONLY | NOFOLLOW | os.O_NONBLOCK, dir_fd=src_fd), "rb") as src:
                    copy_file(src, fd, name, st.st_size, mode, self.times.get(encode_name(path), st.st_mtime_ns), None)
                out.linkable(key, path)
        return src_fd, fd, iter(subdirs)


# --- writing ---------------------------------------------------------------------------------

class Writer:
    """What an extraction remembers: first names of linked inodes, and directories whose mode waits."""

    def __init__(self, dest_fd):
        self.dest_fd = dest_fd
        self.links = {}
        self.directories = []

    def directory(self, fd, name, path, mode, mtime_ns):
        os.mkdir(name, 0o700, dir_fd=fd)
        self.directories.append((path, mode, mtime_ns))

    def link(self, key, fd, name):
        """Makes `name` a hard link of the first name of `key`; False when there is none yet."""
        if key is None or key not in self.links:
            return False
        os.link(self.links[key], name, src_dir_fd=self.dest_fd, dst_dir_fd=fd, follow_symlinks=False)
        return True

    def linkable(self, key, path):
        if key is not None:
            self.links[key] = path

    def finish(self):
        """Directory modes and times last, deepest first: a directory of mode 000 is filled before it closes."""
        for path, mode, mtime_ns in reversed(self.directories):
            fd = self.dest_fd
            for part in path.split(b"/"):
                parent, fd = fd, open_dir(part, fd)
                if parent != self.dest_fd:
                    os.close(parent)
            try:
                os.fchmod(fd, mode)
                if mtime_ns is not None:
                    os.utime(fd, ns=(mtime_ns, mtime_ns))
            finally:
                os.close(fd)


def open_dir(name, dir_fd):
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW, dir_fd=dir_fd)


def close_stack(stack, dest_fd):
    for fd, _ in stack:
        if fd != dest_fd:
            os.close(fd)


def read_opener(path, flags):
    return os.open(path, flags | NOFOLLOW)


PACK_MAGIC = b"FLEETPK1"
INDEX_MAGIC = b"FLEETIX1"


def read_pack_indexes(packs):
    """Object id -> (pack file, offset, length) from every pack index under `packs` (a pack
    belongs to the store once its index exists). An index is checked: magic, size, trailer, its
    name, and every object inside its pack."""
    found = {}
    try:
        names = sorted(os.listdir(packs))
    except FileNotFoundError:
        return found
    for name in names:
        match = re.match(r"^([0-9a-f]{64})\.idx$", name)
        if not match:
            continue
        with open(os.path.join(packs, name), "rb", opener=read_opener) as f:
            data = f.read()
        if len(data) < 52 or data[:8] != INDEX_MAGIC:
            raise ArchiveError("pack index %s: not a pack index" % name)
        count, pack_size = struct.unpack(">IQ", data[8:20])
        if len(data) != 20 + 48 * count + 32:
            raise ArchiveError("pack index %s: %d objects do not fit %d bytes" % (name, count, len(data)))
        body, trailer = data[:-32], data[-32:]
        digest = hashlib.sha256(body).digest()
        if digest != trailer or digest.hex() != match.group(1):
            raise ArchiveError("pack index %s: checksum mismatch" % name)
        pack = os.path.join(packs, match.group(1) + ".pack")
        for i in range(count):
            record = body[20 + 48 * i:20 + 48 * (i + 1)]
            oid = record[:32].hex()
            offset, length = struct.unpack(">QI", record[32:44])
            if offset < len(PACK_MAGIC) or offset + length > pack_size:
                raise ArchiveError("pack index %s: object %s outside its pack" % (name, oid))
            found.setdefault(oid, (pack, offset, length))
    return found


def copy_file(src, dirfd, name, size, mode, mtime_ns, expected_hash):
    """Copies `size` bytes into a new file `name`, leaving all-zero blocks as holes; checks the hash."""
    out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600, dir_fd=dirfd)
    try:
        digest = hashlib.sha256()
        copied = 0
        while copied < size:
            chunk = src.read(min(CHUNK, size - copied))
            if not chunk:
                raise ArchiveError("%r: %d bytes, its entry says %d" % (name, copied, size))
            digest.update(chunk)
            for at in range(0, len(chunk), BLOCK):
                block = chunk[at:at + BLOCK]
                if block.count(0) != len(block):
                    os.pwrite(out, block, copied + at)
            copied += len(chunk)
        os.ftruncate(out, size)
        if expected_hash is not None and digest.hexdigest() != expected_hash:
            raise ArchiveError("object %s does not match its id" % expected_hash)
        os.fchmod(out, mode)
        os.utime(out, ns=(mtime_ns, mtime_ns))
    finally:
        os.close(out)


def make_fifo(dirfd, name, mode, mtime_ns):
    os.mkfifo(name, 0o600, dir_fd=dirfd)
    # Opened without blocking (no writer needed) to set the exact mode and time through the descriptor.
    fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | NOFOLLOW, dir_fd=dirfd)
    try:
        os.fchmod(fd, mode)
        os.utime(fd, ns=(mtime_ns, mtime_ns))
    finally:
        os.close(fd)


def open_destination(dest):
    """DEST must be absent (it is created) or an empty directory."""
    try:
        os.mkdir(dest, 0o700)
    except FileExistsError:
        if not os.path.isdir(dest) or os.path.islink(dest) or os.listdir(dest):
            raise ValueError("%s is not an empty directory" % dest) from None
    return os.open(dest, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW)


# --- command line ----------------------------------------------------------------------------

def main(argv):
    parser = argparse.ArgumentParser(description="Read a sandbox-fleet archive (docs/archive-format.md).")
    parser.add_argument("root", help="the archive root (FLEET_ARCHIVE_ROOT)")
    parser.add_argument("workspace", help="workspace id")
    parser.add_argument("--revision", help="revision id (default: the one current points at)")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("revisions", help="list the committed revisions and their formats")
    listing = commands.add_parser("list", help="list every path of the revision")
    listing.add_argument("--json", action="store_true", help="print the entries in the fleet's manifest shape")
    extract = commands.add_parser("extract", help="write the revision as a tree")
    extract.add_argument("dest", help="a new or empty directory")
    args = parser.parse_args(argv)
    try:
        archive = Archive(args.root, args.workspace)
        if args.command == "revisions":
            for revision, fmt in archive.revisions().items():
                print("%s format %d%s" % (revision, fmt, " current" if revision == archive.current() else ""))
            return 0
        revision = archive.open_revision(args.revision)
        if args.command == "list":
            entries = revision.entries()
            if args.json:
                json.dump({"format": revision.format, "entries": entries}, sys.stdout, ensure_ascii=False)
                sys.stdout.write("\n")
            else:
                for e in entries:
                    print("%s %04o %12s %r" % (e["t"], e["m"], e.get("s", "-"), e["p"]))
            return 0
        dest_fd = open_destination(args.dest)
        try:
            revision.extract(dest_fd)
        finally:
            os.close(dest_fd)
        return 0
    except ValueError as error:
        print("read-archive: %s" % error, file=sys.stderr)
        return 2
    except (ArchiveError, OSError, KeyError) as error:
        print("read-archive: %s" % error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
