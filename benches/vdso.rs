//! The kernel's own userspace CSPRNG as a peer of `thread_rng.rs`: `vgetrandom`
//! in the vDSO (Linux 6.11+ on x86_64, a later release on aarch64), found at
//! run time and called directly with one opaque state per thread, the way glibc
//! 2.41's `getrandom` and `arc4random` call it (older glibc does not).
//!
//! Written from these sources, none copied: the kernel's `lib/vdso/getrandom.c`
//! (the call, its parameters query, and when it falls back to the system call),
//! `include/uapi/linux/random.h` (`struct vgetrandom_opaque_params`),
//! `arch/{x86/entry,arm64/kernel}/vdso/vdso.lds.S` (the symbols' names and
//! versions), glibc 2.41's `sysdeps/unix/sysv/linux/getrandom.c` (states carved a
//! page at a time, each a cache line apart, taken by a thread at its first call
//! and handed back at its exit), and the ELF gABI (dynamic section, hash tables,
//! symbol versions).
//!
//! Where there is no such symbol (kernel before 6.11, another OS or
//! architecture), [`unavailable`] says why and the bench prints one line and
//! leaves the peer out.

/// The function id of this peer in every group.
pub const NAME: &str = "vdso::getrandom";

#[cfg(target_os = "linux")]
pub use linux::{announce, fill, u64, unavailable};

/// Elsewhere: never available; the bench never calls [`u64`] or [`fill`].
#[cfg(not(target_os = "linux"))]
mod other {
    pub fn unavailable() -> Option<&'static str> {
        Some("the vDSO getrandom is Linux's (6.11 and later)")
    }

    pub fn announce() {
        eprintln!("{}: skipped, {}", super::NAME, unavailable().unwrap());
    }

    pub fn u64() -> u64 {
        unreachable!("{}", unavailable().unwrap())
    }

    pub fn fill(_: &mut [u8]) {
        unreachable!("{}", unavailable().unwrap())
    }
}

#[cfg(not(target_os = "linux"))]
pub use other::{announce, fill, u64, unavailable};

#[cfg(target_os = "linux")]
mod linux {
    use std::cell::Cell;
    use std::ffi::{c_uint, c_void};
    use std::ptr;
    use std::sync::{Mutex, OnceLock};

    use super::{NAME, elf};

    /// The symbol and version each architecture's vDSO exports it under
    /// (`vdso.lds.S`); `None` where this bench knows of none.
    const SYMBOL: Option<(&str, &str)> = if cfg!(target_arch = "x86_64") {
        Some(("__vdso_getrandom", "LINUX_2.6"))
    } else if cfg!(target_arch = "aarch64") {
        Some(("__kernel_getrandom", "LINUX_2.6.39"))
    } else {
        None
    };

    /// glibc rounds each state up to the L1 data cache line (no false sharing
    /// between threads); 64 bytes on every x86_64 and most aarch64 cores.
    const CACHE_LINE_BYTES: usize = 64;

    /// `ssize_t vgetrandom(void *buf, size_t len, unsigned int flags, void
    /// *opaque_state, size_t opaque_len)`: the `getrandom` system call's result
    /// (bytes written, or a negated errno).
    type VgetrandomFn =
        unsafe extern "C" fn(*mut c_void, usize, c_uint, *mut c_void, usize) -> isize;

    /// `struct vgetrandom_opaque_params` (`include/uapi/linux/random.h`): what
    /// the parameters query writes.
    #[repr(C)]
    struct OpaqueParams {
        size_of_opaque_state: u32,
        mmap_prot: u32,
        mmap_flags: u32,
        reserved: [u32; 13],
    }

    /// The function found and how to allocate a state for it.
    struct Vgetrandom {
        func: VgetrandomFn,
        /// `size_of_opaque_state`, passed as `opaque_len` on every call: with
        /// any other length the vDSO quietly makes the system call instead.
        state_bytes: usize,
        /// A state's stride within its page (its size rounded up to a cache line).
        stride_bytes: usize,
        page_bytes: usize,
        mmap_prot: i32,
        mmap_flags: i32,
        /// Where it was found, for the line the bench prints.
        found: String,
    }

    static FOUND: OnceLock<Result<Vgetrandom, String>> = OnceLock::new();

    /// The function, looked up at the first call of the process.
    fn vgetrandom() -> Result<&'static Vgetrandom, &'static str> {
        FOUND.get_or_init(find).as_ref().map_err(String::as_str)
    }

    /// Why this peer cannot run here, or `None` where it can.
    pub fn unavailable() -> Option<&'static str> {
        vgetrandom().err()
    }

    /// Finds the function (skipped: one line on stderr), and where it is found
    /// checks its plumbing on this thread (panics where the output is wrong).
    pub fn announce() {
        match vgetrandom() {
            Err(why) => eprintln!("{NAME}: skipped, {why}"),
            Ok(v) => {
                check(v);
                eprintln!(
                    "{NAME}: {}; opaque state {} bytes, mmap prot {:#x} flags {:#x}; output checked",
                    v.found, v.state_bytes, v.mmap_prot, v.mmap_flags
                );
            }
        }
    }

    /// Looks the symbol up in the vDSO the kernel mapped into this process,
    /// then asks it for its state's size and mapping flags.
    fn find() -> Result<Vgetrandom, String> {
        let (name, version) =
            SYMBOL.ok_or("no vDSO getrandom symbol is known for this architecture")?;
        // SAFETY: `getauxval` reads the auxiliary vector the kernel gave the
        // process; it has no preconditions.
        let base = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
        if base == 0 {
            return Err("this process has no vDSO (AT_SYSINFO_EHDR is 0)".into());
        }
        let page_bytes = page_bytes();
        // SAFETY: the kernel maps the vDSO's ELF image at AT_SYSINFO_EHDR,
        // readable, at least one page long, for the life of the process, and
        // never writes it.
        let image = unsafe { elf::mapped_image(base, page_bytes) }?;
        let offset = elf::lookup(image, name, version)?
            .ok_or_else(|| format!("the vDSO exports no {name}@{version} (Linux 6.11+ does)"))?;
        // SAFETY: `offset` is the entry of a defined function symbol within the
        // image (`elf::lookup` checked both), the kernel's `vgetrandom`, whose C
        // signature `VgetrandomFn` spells out (`lib/vdso/getrandom.c`).
        let func =
            unsafe { std::mem::transmute::<*const u8, VgetrandomFn>(image.as_ptr().add(offset)) };
        let mut params = OpaqueParams {
            size_of_opaque_state: 0,
            mmap_prot: 0,
            mmap_flags: 0,
            reserved: [0; 13],
        };
        // SAFETY: the parameters query (no buffer, length 0, no flags,
        // `opaque_len` ~0) writes one `struct vgetrandom_opaque_params` to
        // `opaque_state`, which `params` is, and touches nothing else.
        let ret = unsafe { func(ptr::null_mut(), 0, 0, (&raw mut params).cast(), usize::MAX) };
        if ret != 0 {
            return Err(format!(
                "its parameters query returned {ret} (a negated errno: no vDSO state here)"
            ));
        }
        let state_bytes = params.size_of_opaque_state as usize;
        let stride_bytes = state_bytes.next_multiple_of(CACHE_LINE_BYTES);
        // A state must not straddle a page (the kernel returns -EFAULT): like
        // glibc, give up where one does not fit in a page.
        if state_bytes == 0 || stride_bytes > page_bytes {
            return Err(format!("its opaque state is {state_bytes} bytes"));
        }
        Ok(Vgetrandom {
            func,
            state_bytes,
            stride_bytes,
            page_bytes,
            mmap_prot: params.mmap_prot as i32,
            mmap_flags: params.mmap_flags as i32,
            found: format!("{name}@{version} at vDSO offset {offset:#x}"),
        })
    }

    fn page_bytes() -> usize {
        // SAFETY: `sysconf` has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        usize::try_from(page).unwrap_or(4096)
    }

    /// An opaque state, in a mapping made with the kernel's flags and never
    /// unmapped; `Send` so that the free list can sit in a `static`.
    struct State(*mut c_void);

    // SAFETY: a state is used by one thread at a time: the thread that took it
    // from `FREE` holds it in its `STATE` until it exits and hands it back.
    unsafe impl Send for State {}

    /// States carved and not held by a live thread (glibc's `grnd_alloc`).
    static FREE: Mutex<Vec<State>> = Mutex::new(Vec::new());

    /// This thread's state, taken at its first call and handed back at its exit.
    struct ThreadState(Cell<*mut c_void>);

    impl Drop for ThreadState {
        fn drop(&mut self) {
            let state = self.0.get();
            if !state.is_null() {
                FREE.lock().unwrap().push(State(state));
            }
        }
    }

    thread_local! {
        static STATE: ThreadState = const { ThreadState(Cell::new(ptr::null_mut())) };
    }

    /// A free state, or where there is none, a new page of them (glibc maps one
    /// page at a time).
    #[cold]
    fn take_state(v: &Vgetrandom) -> *mut c_void {
        let mut free = FREE.lock().unwrap();
        if free.is_empty() {
            // SAFETY: a new anonymous mapping (the kernel's flags include
            // MAP_ANONYMOUS: no file, no fixed address); nothing else is touched.
            let page = unsafe {
                libc::mmap(
                    ptr::null_mut(),
                    v.page_bytes,
                    v.mmap_prot,
                    v.mmap_flags,
                    -1,
                    0,
                )
            };
            assert_ne!(
                page,
                libc::MAP_FAILED,
                "{NAME}: mmap of a state page: {}",
                std::io::Error::last_os_error()
            );
            for i in (0..v.page_bytes / v.stride_bytes).rev() {
                // SAFETY: `i * stride_bytes + state_bytes <= page_bytes`: each
                // state lies within the page just mapped.
                free.push(State(unsafe { page.byte_add(i * v.stride_bytes) }));
            }
        }
        free.pop().unwrap().0
    }

    /// This thread's state: taken at its first call.
    #[inline]
    fn thread_state(v: &Vgetrandom) -> *mut c_void {
        STATE.with(|s| {
            if s.0.get().is_null() {
                s.0.set(take_state(v));
            }
            s.0.get()
        })
    }

    /// Fills `buf` through the vDSO with this thread's state: at least one call
    /// (an empty `buf` included, as the group `fill_bytes/0` times it), more only
    /// where one returned less than asked.
    #[inline]
    pub fn fill(buf: &mut [u8]) {
        let v = vgetrandom().unwrap_or_else(|why| panic!("{NAME}: {why}"));
        let state = thread_state(v);
        let mut done = 0;
        loop {
            let rest = &mut buf[done..];
            let asked = rest.len();
            // SAFETY: `rest` is writable for its length; `state` is this
            // thread's own, `state_bytes` long within one page of a mapping
            // made with the kernel's flags, and no other call uses it now (this
            // thread makes one call at a time; no signal handler here draws).
            let n = unsafe { (v.func)(rest.as_mut_ptr().cast(), asked, 0, state, v.state_bytes) };
            let n = usize::try_from(n).unwrap_or_else(|_| {
                panic!(
                    "{NAME}: error {}",
                    std::io::Error::from_raw_os_error(-n as i32)
                )
            });
            done += n;
            if done >= buf.len() {
                return;
            }
            assert!(n > 0, "{NAME}: no bytes for a request of {asked}");
        }
    }

    /// 8 bytes, as `ratchet_rng::u64()` serves them.
    #[inline]
    pub fn u64() -> u64 {
        let mut bytes = [0; 8];
        fill(&mut bytes);
        u64::from_ne_bytes(bytes)
    }

    /// The plumbing's sanity check, on the calling thread (panics on failure):
    /// each call returns exactly the length asked and writes no byte past it,
    /// the output is not all zeros, two calls differ, and the state was written
    /// (the vDSO ran; its fallback, the system call, leaves the state alone).
    fn check(v: &Vgetrandom) {
        const SENTINEL: u8 = 0x5a;
        let state = thread_state(v);
        for len in [0, 1, 8, 40, 4096, 4099, 512 * 1024 + 3] {
            let mut buf = vec![SENTINEL; len + 64];
            // SAFETY: as in `fill`: `buf` is writable for `len` bytes and more;
            // `state` is this thread's, with no other call under way.
            let n = unsafe { (v.func)(buf.as_mut_ptr().cast(), len, 0, state, v.state_bytes) };
            assert_eq!(n, len as isize, "{NAME}: asked {len} bytes");
            assert!(
                buf[len..].iter().all(|&b| b == SENTINEL),
                "{NAME}: wrote past {len} bytes"
            );
            // 8 random bytes are all zero, or all the sentinel, with
            // probability 2^-64 each.
            if len >= 8 {
                assert!(
                    buf[..len].iter().any(|&b| b != 0),
                    "{NAME}: {len} zero bytes"
                );
                assert!(
                    buf[..len].iter().any(|&b| b != SENTINEL),
                    "{NAME}: {len} bytes left as they were"
                );
            }
        }
        let (mut a, mut b) = ([0u8; 32], [0u8; 32]);
        fill(&mut a);
        fill(&mut b);
        assert_ne!(a, b, "{NAME}: two calls gave the same 32 bytes");
        // SAFETY: `state` is this thread's, `state_bytes` long in a readable
        // mapping, and no call is under way on this thread to write it.
        let bytes = unsafe { std::slice::from_raw_parts(state.cast::<u8>(), v.state_bytes) };
        assert!(
            bytes.iter().any(|&b| b != 0),
            "{NAME}: the opaque state is untouched: the calls fell back to the system call"
        );
    }
}

/// Just enough of the ELF format to find one versioned function in the vDSO,
/// which is a 64-bit ELF shared object mapped whole (Linux's
/// `Documentation/ABI/stable/vdso`). Each read is bounds-checked: a malformed
/// image gives an error, never a read outside it.
#[cfg(target_os = "linux")]
mod elf {
    use std::ops::Range;

    const EHDR_BYTES: usize = 64;
    const PHDR_BYTES: usize = 56;
    const DYN_BYTES: usize = 16;
    const SYM_BYTES: usize = 24;

    const PT_LOAD: u32 = 1;
    const PT_DYNAMIC: u32 = 2;

    const DT_NULL: u64 = 0;
    const DT_HASH: u64 = 4;
    const DT_STRTAB: u64 = 5;
    const DT_SYMTAB: u64 = 6;
    const DT_STRSZ: u64 = 10;
    const DT_GNU_HASH: u64 = 0x6fff_fef5;
    const DT_VERSYM: u64 = 0x6fff_fff0;
    const DT_VERDEF: u64 = 0x6fff_fffc;

    const STT_FUNC: u8 = 2;
    const STB_GLOBAL: u8 = 1;
    const STB_WEAK: u8 = 2;
    const SHN_UNDEF: u16 = 0;
    /// The bit of a `.gnu.version` entry that marks a version other than the
    /// symbol's default; the other bits are the version's index.
    const VERSYM_HIDDEN: u16 = 0x8000;

    type Result<T> = std::result::Result<T, String>;

    /// The image from its ELF header to the end of its loaded segments' file
    /// contents (the vDSO is one mapping of that much and more).
    ///
    /// # Safety
    /// `base` is the start of a readable mapping of an ELF image, at least
    /// `page_bytes` long, that lives and stays unchanged for the rest of the
    /// process (the vDSO at `AT_SYSINFO_EHDR`).
    pub unsafe fn mapped_image(base: usize, page_bytes: usize) -> Result<&'static [u8]> {
        let start = std::ptr::with_exposed_provenance::<u8>(base);
        // SAFETY: the first page is mapped and readable (the caller's promise).
        let first_page = unsafe { std::slice::from_raw_parts(start, page_bytes) };
        let header = Header::parse(first_page)?;
        let mut end = page_bytes;
        for ph in header.program_headers(first_page)? {
            if ph.kind == PT_LOAD {
                end = end.max(ph.file.end);
            }
        }
        // SAFETY: the kernel maps the whole image; the loaded segments' file
        // contents are part of it.
        Ok(unsafe { std::slice::from_raw_parts(start, end) })
    }

    /// The offset in `image` of the defined function `name` of version
    /// `version`, or `None` where the image has no such symbol.
    pub fn lookup(image: &[u8], name: &str, version: &str) -> Result<Option<usize>> {
        let header = Header::parse(image)?;
        let segments = header.program_headers(image)?;
        let loads: Vec<&ProgramHeader> = segments.iter().filter(|p| p.kind == PT_LOAD).collect();
        // Dynamic entries hold link-time addresses: map them to offsets
        // through the loaded segment that holds them.
        let offset_of = |vaddr: u64| -> Result<usize> {
            loads
                .iter()
                .find_map(|p| {
                    let into = vaddr.checked_sub(p.vaddr)?;
                    (into < p.file.len() as u64).then(|| p.file.start + into as usize)
                })
                .ok_or_else(|| format!("address {vaddr:#x} is in no loaded segment"))
        };
        let dynamic = segments
            .iter()
            .find(|p| p.kind == PT_DYNAMIC)
            .ok_or("no PT_DYNAMIC segment")?;

        // The dynamic section: (tag, value) pairs up to DT_NULL.
        let (mut symtab, mut strtab, mut strsz) = (None, None, None);
        let (mut hash, mut gnu_hash, mut versym, mut verdef) = (None, None, None, None);
        for entry in dynamic.file.clone().step_by(DYN_BYTES) {
            let (tag, value) = (read_u64(image, entry)?, read_u64(image, entry + 8)?);
            match tag {
                DT_NULL => break,
                DT_SYMTAB => symtab = Some(offset_of(value)?),
                DT_STRTAB => strtab = Some(offset_of(value)?),
                DT_STRSZ => strsz = Some(value as usize),
                DT_HASH => hash = Some(offset_of(value)?),
                DT_GNU_HASH => gnu_hash = Some(offset_of(value)?),
                DT_VERSYM => versym = Some(offset_of(value)?),
                DT_VERDEF => verdef = Some(offset_of(value)?),
                _ => {}
            }
        }
        let symtab = symtab.ok_or("no DT_SYMTAB")?;
        let strtab = strtab.ok_or("no DT_STRTAB")?;
        let strings = strtab
            ..strtab
                .checked_add(strsz.ok_or("no DT_STRSZ")?)
                .ok_or("DT_STRSZ overflows")?;
        let symbols = match (hash, gnu_hash) {
            (Some(hash), _) => sysv_hash_symbols(image, hash)?,
            (None, Some(gnu_hash)) => gnu_hash_symbols(image, gnu_hash)?,
            (None, None) => return Err("neither DT_HASH nor DT_GNU_HASH".into()),
        };
        // The version index `version` names, where the image has versions.
        let wanted_index = match verdef {
            Some(verdef) => match version_index(image, verdef, &strings, version)? {
                Some(index) => Some(index),
                None => return Ok(None),
            },
            None => None,
        };

        for i in 0..symbols {
            let sym = symtab + i * SYM_BYTES;
            let name_at = read_u32(image, sym)? as usize;
            let info = *image.get(sym + 4).ok_or("symbol table past the image")?;
            let section = read_u16(image, sym + 6)?;
            let value = read_u64(image, sym + 8)?;
            let (kind, binding) = (info & 0xf, info >> 4);
            if kind != STT_FUNC
                || !(binding == STB_GLOBAL || binding == STB_WEAK)
                || section == SHN_UNDEF
                || c_str(image, &strings, name_at)? != name.as_bytes()
            {
                continue;
            }
            if let (Some(wanted), Some(versym)) = (wanted_index, versym) {
                let index = read_u16(image, versym + 2 * i)?;
                if index & !VERSYM_HIDDEN != wanted {
                    continue;
                }
            }
            let offset = offset_of(value)?;
            return Ok(Some(offset));
        }
        Ok(None)
    }

    /// The number of symbols: DT_HASH's `nchain` (its second word).
    fn sysv_hash_symbols(image: &[u8], hash: usize) -> Result<usize> {
        Ok(read_u32(image, hash + 4)? as usize)
    }

    /// The number of symbols from DT_GNU_HASH, which does not state it: one past
    /// the last symbol of the chain that starts highest (a chain's last entry
    /// has its low bit set). Header: buckets, the first hashed symbol, the
    /// bloom filter's 64-bit words, its shift.
    fn gnu_hash_symbols(image: &[u8], gnu_hash: usize) -> Result<usize> {
        let buckets = read_u32(image, gnu_hash)? as usize;
        let first_hashed = read_u32(image, gnu_hash + 4)? as usize;
        let bloom_words = read_u32(image, gnu_hash + 8)? as usize;
        let bucket_table = gnu_hash + 16 + 8 * bloom_words;
        let chains = bucket_table + 4 * buckets;
        let mut last = 0;
        for b in 0..buckets {
            last = last.max(read_u32(image, bucket_table + 4 * b)? as usize);
        }
        if last < first_hashed {
            return Ok(first_hashed);
        }
        while read_u32(image, chains + 4 * (last - first_hashed))? & 1 == 0 {
            last += 1;
        }
        Ok(last + 1)
    }

    /// The index of version `name` among the version definitions (a linked
    /// list of `Elf64_Verdef`, each naming itself in its first `Elf64_Verdaux`).
    fn version_index(
        image: &[u8],
        verdef: usize,
        strings: &Range<usize>,
        name: &str,
    ) -> Result<Option<u16>> {
        let mut def = verdef;
        // A bound on the walk, in case `vd_next` loops.
        for _ in 0..1024 {
            let index = read_u16(image, def + 4)?;
            let aux = read_u32(image, def + 12)? as usize;
            let next = read_u32(image, def + 16)? as usize;
            let name_at = read_u32(image, def + aux)? as usize;
            if c_str(image, strings, name_at)? == name.as_bytes() {
                return Ok(Some(index));
            }
            if next == 0 {
                return Ok(None);
            }
            def += next;
        }
        Err("the version definitions do not end".into())
    }

    /// The parts of `Elf64_Ehdr` needed here.
    struct Header {
        phoff: usize,
        phnum: usize,
    }

    /// The parts of an `Elf64_Phdr` needed here.
    struct ProgramHeader {
        kind: u32,
        vaddr: u64,
        /// Its bytes in the image (`p_offset .. p_offset + p_filesz`).
        file: Range<usize>,
    }

    impl Header {
        fn parse(image: &[u8]) -> Result<Self> {
            let ident = image.get(..16).ok_or("shorter than an ELF header")?;
            if ident[..4] != *b"\x7fELF" {
                return Err("no ELF magic at AT_SYSINFO_EHDR".into());
            }
            // EI_CLASS 2: 64-bit; EI_DATA: this CPU's byte order.
            let native = if cfg!(target_endian = "little") { 1 } else { 2 };
            if ident[4] != 2 || ident[5] != native {
                return Err("the vDSO is not a 64-bit ELF image in this byte order".into());
            }
            if image.len() < EHDR_BYTES || read_u16(image, 54)? as usize != PHDR_BYTES {
                return Err("unexpected ELF header or program header size".into());
            }
            Ok(Header {
                phoff: read_u64(image, 32)? as usize,
                phnum: read_u16(image, 56)? as usize,
            })
        }

        fn program_headers(&self, image: &[u8]) -> Result<Vec<ProgramHeader>> {
            (0..self.phnum)
                .map(|i| {
                    let ph = self.phoff + i * PHDR_BYTES;
                    let offset = read_u64(image, ph + 8)? as usize;
                    let size = read_u64(image, ph + 32)? as usize;
                    Ok(ProgramHeader {
                        kind: read_u32(image, ph)?,
                        vaddr: read_u64(image, ph + 16)?,
                        file: offset..offset.checked_add(size).ok_or("segment size overflows")?,
                    })
                })
                .collect()
        }
    }

    /// The NUL-terminated string at `at` in the string table `strings`.
    fn c_str<'a>(image: &'a [u8], strings: &Range<usize>, at: usize) -> Result<&'a [u8]> {
        let table = image
            .get(strings.clone())
            .ok_or("string table past the image")?;
        let rest = table.get(at..).ok_or("string past its table")?;
        let len = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or("unterminated string")?;
        Ok(&rest[..len])
    }

    fn read<const N: usize>(image: &[u8], at: usize) -> Result<[u8; N]> {
        at.checked_add(N)
            .and_then(|end| image.get(at..end))
            .map(|b| b.try_into().unwrap())
            .ok_or_else(|| format!("read of {N} bytes at {at:#x}: past the image"))
    }

    fn read_u16(image: &[u8], at: usize) -> Result<u16> {
        read(image, at).map(u16::from_ne_bytes)
    }

    fn read_u32(image: &[u8], at: usize) -> Result<u32> {
        read(image, at).map(u32::from_ne_bytes)
    }

    fn read_u64(image: &[u8], at: usize) -> Result<u64> {
        read(image, at).map(u64::from_ne_bytes)
    }
}
