//! The link between the processes of a group: TCP, in a star around rank 0.
//!
//! Joining: rank 0 listens on the rendezvous port; every other rank connects to it (retrying
//! until rank 0 listens or the timeout ends) and says who it is; once all have arrived, rank 0
//! sends every rank what each said (the devices each process brings). Collectives: every rank
//! sends rank 0 one message holding a part for each rank; rank 0 sends each rank the parts meant
//! for it. Rank 0 relays everything, which keeps every rank to one connection and the protocol
//! to one exchange a collective: the wire carries the small host messages of every sharded
//! algorithm, and the data of host devices (development and tests); GPUs' data goes through
//! NCCL where the group has it.
//!
//! No call waits for ever: every read and write has the group's timeout; a peer that exits
//! closes its connection, which its readers see at once. Once a collective fails on a rank, its
//! wire is broken: it shuts its connections (so rank 0, and through it every rank, fail their
//! collective at once rather than at the timeout), and every later collective fails with the
//! first error. Each message carries the number of its collective and the operation that made
//! it, so ranks that call different operations fail instead of mixing their data.

use crate::error::{Error, Result};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The first word of a joining rank's greeting and of rank 0's answer.
const MAGIC: u64 = u64::from_le_bytes(*b"devseq\x01\x00");
/// The tag of the messages of joining.
const JOIN: Tag<'static> = Tag {
    seq: 0,
    what: "join",
};
/// The largest message the wire accepts (a corrupt length must not allocate the machine).
const MAX_MESSAGE: u64 = 1 << 40;

/// The links of one process to the others of its group.
pub(crate) struct Wire {
    rank: usize,
    ranks: usize,
    timeout: Duration,
    state: Mutex<State>,
}

struct State {
    /// On rank 0, the connection to rank `r` at `r - 1`; on the others, the one to rank 0.
    links: Vec<TcpStream>,
    /// The collectives begun so far.
    seq: u64,
    /// Why the wire failed, once it has.
    broken: Option<Error>,
}

/// A group failure: a peer that left, did not answer, or spoke out of turn.
fn group_error(what: String) -> Error {
    Error::Group(what)
}

/// What an I/O failure with `peer` means.
fn io_error(peer: &str, e: io::Error, timeout: Duration) -> Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => group_error(format!(
            "{peer} did not answer within {} s (DEVSEQ_GROUP_TIMEOUT)",
            timeout.as_secs_f64()
        )),
        io::ErrorKind::UnexpectedEof
        | io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => group_error(format!(
            "{peer} left the group (its connection closed: it failed or exited)"
        )),
        io::ErrorKind::InvalidData => group_error(format!("{peer} is out of step: {e}")),
        _ => group_error(format!("the connection with {peer} failed: {e}")),
    }
}

/// Reads `buf` whole before `deadline`.
fn read_by(s: &mut TcpStream, buf: &mut [u8], deadline: Instant) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        s.set_read_timeout(Some(left))?;
        match s.read(&mut buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes `buf` whole before `deadline`.
fn write_by(s: &mut TcpStream, buf: &[u8], deadline: Instant) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        s.set_write_timeout(Some(left))?;
        match s.write(&buf[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn read_u64(s: &mut TcpStream, deadline: Instant) -> io::Result<u64> {
    let mut b = [0u8; 8];
    read_by(s, &mut b, deadline)?;
    Ok(u64::from_le_bytes(b))
}

/// Which collective a message belongs to: its number on the wire, and the operation that
/// called it (`"reduce"`, `"sort"`, ...).
#[derive(Clone, Copy)]
struct Tag<'a> {
    seq: u64,
    what: &'a str,
}

/// The longest operation name a tag carries.
const MAX_NAME: u64 = 256;

/// One message: its tag, its length, its bytes.
fn send_frame(s: &mut TcpStream, tag: Tag<'_>, body: &[u8], deadline: Instant) -> io::Result<()> {
    let mut head = Vec::with_capacity(24 + tag.what.len());
    head.extend_from_slice(&tag.seq.to_le_bytes());
    head.extend_from_slice(&(tag.what.len() as u64).to_le_bytes());
    head.extend_from_slice(tag.what.as_bytes());
    head.extend_from_slice(&(body.len() as u64).to_le_bytes());
    write_by(s, &head, deadline)?;
    write_by(s, body, deadline)
}

/// The body of the message tagged `tag`; a message of another collective is an error.
fn recv_frame(s: &mut TcpStream, tag: Tag<'_>, deadline: Instant) -> io::Result<Vec<u8>> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let seq = read_u64(s, deadline)?;
    let name_len = read_u64(s, deadline)?;
    if name_len > MAX_NAME {
        return Err(bad("a malformed message".into()));
    }
    let mut name = vec![0u8; name_len as usize];
    read_by(s, &mut name, deadline)?;
    let name = String::from_utf8_lossy(&name);
    if seq != tag.seq || name != tag.what {
        return Err(bad(format!(
            "it is at collective {seq} ({name}) where this rank is at collective {} ({}): \
             the ranks called different operations",
            tag.seq, tag.what
        )));
    }
    let len = read_u64(s, deadline)?;
    if len > MAX_MESSAGE {
        return Err(bad("a malformed message".into()));
    }
    let mut body = vec![0u8; len as usize];
    read_by(s, &mut body, deadline)?;
    Ok(body)
}

/// Byte strings as one: their count, then each one's length and bytes.
pub(crate) fn put_list(parts: &[Vec<u8>]) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.len() + 8).sum();
    let mut out = Vec::with_capacity(total + 8);
    out.extend_from_slice(&(parts.len() as u64).to_le_bytes());
    for p in parts {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// A reader of the byte strings and numbers that messages are made of.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes }
    }

    fn malformed() -> Error {
        group_error("a malformed message from another rank".into())
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.bytes.len() {
            return Err(Self::malformed());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    pub fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(
            b.try_into().map_err(|_| Self::malformed())?,
        ))
    }

    pub fn usize(&mut self) -> Result<usize> {
        usize::try_from(self.u64()?).map_err(|_| Self::malformed())
    }

    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.usize()?;
        self.take(n)
    }

    /// The rest, which must be nothing.
    pub fn end(&self) -> Result<()> {
        if self.bytes.is_empty() {
            Ok(())
        } else {
            Err(Self::malformed())
        }
    }
}

/// The byte strings `put_list` made.
pub(crate) fn get_list(bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut c = Cursor::new(bytes);
    let n = c.usize()?;
    let parts = (0..n)
        .map(|_| c.bytes().map(<[u8]>::to_vec))
        .collect::<Result<Vec<_>>>()?;
    c.end()?;
    Ok(parts)
}

/// The port of a rendezvous `host:port`, and the address itself checked.
fn port_of(rendezvous: &str) -> Result<u16> {
    let bad = || {
        Error::InvalidArgument(format!(
            "the rendezvous {rendezvous:?} is not host:port (MASTER_ADDR and MASTER_PORT)"
        ))
    };
    let (host, port) = rendezvous.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() {
        return Err(bad());
    }
    port.parse::<u16>().map_err(|_| bad())
}

impl Wire {
    /// Joins the group as `rank` of `ranks` through the rendezvous `host:port` (where rank 0
    /// listens), saying `hello`; the wire, and every rank's hello in rank order. A group of one
    /// rank needs no connection.
    ///
    /// # Errors
    ///
    /// `Error::InvalidArgument` for a rank outside `0..ranks` or a rendezvous that is not
    /// `host:port`; `Error::Group` where a rank does not arrive within `timeout`, two ranks
    /// claim one place, or rank 0 cannot listen on the port.
    pub fn join(
        rank: usize,
        ranks: usize,
        rendezvous: &str,
        timeout: Duration,
        hello: Vec<u8>,
    ) -> Result<(Wire, Vec<Vec<u8>>)> {
        if rank >= ranks {
            return Err(Error::InvalidArgument(format!(
                "rank {rank} of a group of {ranks} ranks"
            )));
        }
        let port = port_of(rendezvous)?;
        let deadline = Instant::now() + timeout;
        let (links, hellos) = if ranks == 1 {
            (Vec::new(), vec![hello])
        } else if rank == 0 {
            Self::host(ranks, port, timeout, deadline, hello)?
        } else {
            Self::visit(rank, ranks, rendezvous, timeout, deadline, hello)?
        };
        let wire = Wire {
            rank,
            ranks,
            timeout,
            state: Mutex::new(State {
                links,
                seq: 0,
                broken: None,
            }),
        };
        Ok((wire, hellos))
    }

    /// Rank 0's side of joining: every other rank's connection, in rank order, and the hellos.
    fn host(
        ranks: usize,
        port: u16,
        timeout: Duration,
        deadline: Instant,
        hello: Vec<u8>,
    ) -> Result<(Vec<TcpStream>, Vec<Vec<u8>>)> {
        let listener = TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).map_err(|e| {
            group_error(format!(
                "rank 0 cannot listen on port {port} (MASTER_PORT): {e}"
            ))
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| group_error(format!("rank 0 cannot listen on port {port}: {e}")))?;
        let mut links: Vec<Option<TcpStream>> = (1..ranks).map(|_| None).collect();
        let mut hellos: Vec<Option<Vec<u8>>> = (0..ranks).map(|_| None).collect();
        hellos[0] = Some(hello);
        let mut arrived = 1;
        while arrived < ranks {
            let (mut s, _) = match listener.accept() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        let missing: Vec<String> = (1..ranks)
                            .filter(|&r| hellos[r].is_none())
                            .map(|r| r.to_string())
                            .collect();
                        return Err(group_error(format!(
                            "rank {} of {ranks} did not join within {} s (DEVSEQ_GROUP_TIMEOUT)",
                            missing.join(", "),
                            timeout.as_secs_f64()
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
                Err(e) => return Err(group_error(format!("rank 0 cannot accept a rank: {e}"))),
            };
            // A greeting that is not devseq's (something else on the port) is ignored.
            let greeting = (|| -> io::Result<(u64, u64, Vec<u8>)> {
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                let by = deadline.min(Instant::now() + Duration::from_secs(10));
                if read_u64(&mut s, by)? != MAGIC {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                let (r, n) = (read_u64(&mut s, by)?, read_u64(&mut s, by)?);
                Ok((r, n, recv_frame(&mut s, JOIN, by)?))
            })();
            let Ok((r, n, said)) = greeting else { continue };
            if n != ranks as u64 {
                return Err(group_error(format!(
                    "rank {r} joined a group of {n} ranks, rank 0 one of {ranks} (WORLD_SIZE)"
                )));
            }
            let r = r as usize;
            if r == 0 || r >= ranks || hellos[r].is_some() {
                return Err(group_error(format!(
                    "two processes joined as rank {r} of {ranks} (RANK)"
                )));
            }
            hellos[r] = Some(said);
            links[r - 1] = Some(s);
            arrived += 1;
        }
        let mut links: Vec<TcpStream> = links.into_iter().flatten().collect();
        let hellos: Vec<Vec<u8>> = hellos.into_iter().flatten().collect();
        let welcome = put_list(&hellos);
        for (i, s) in links.iter_mut().enumerate() {
            send_frame(s, JOIN, &welcome, deadline)
                .map_err(|e| io_error(&format!("rank {}", i + 1), e, timeout))?;
        }
        Ok((links, hellos))
    }

    /// A later rank's side of joining: its connection to rank 0, and the hellos.
    fn visit(
        rank: usize,
        ranks: usize,
        rendezvous: &str,
        timeout: Duration,
        deadline: Instant,
        hello: Vec<u8>,
    ) -> Result<(Vec<TcpStream>, Vec<Vec<u8>>)> {
        let addrs: Vec<_> = rendezvous
            .to_socket_addrs()
            .map_err(|e| {
                Error::InvalidArgument(format!(
                    "the rendezvous {rendezvous:?} (MASTER_ADDR) does not resolve: {e}"
                ))
            })?
            .collect();
        let mut s = loop {
            let mut last = None;
            for a in &addrs {
                let left = deadline.saturating_duration_since(Instant::now());
                match TcpStream::connect_timeout(
                    a,
                    left.clamp(Duration::from_millis(1), Duration::from_secs(1)),
                ) {
                    Ok(s) => {
                        last = Some(Ok(s));
                        break;
                    }
                    Err(e) => last = Some(Err(e)),
                }
            }
            match last {
                Some(Ok(s)) => break s,
                _ if Instant::now() >= deadline => {
                    return Err(group_error(format!(
                        "rank {rank} found no rank 0 at {rendezvous} within {} s \
                         (DEVSEQ_GROUP_TIMEOUT)",
                        timeout.as_secs_f64()
                    )));
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        };
        let hellos = (|| -> io::Result<Vec<u8>> {
            s.set_nodelay(true)?;
            let mut head = Vec::with_capacity(24);
            head.extend_from_slice(&MAGIC.to_le_bytes());
            head.extend_from_slice(&(rank as u64).to_le_bytes());
            head.extend_from_slice(&(ranks as u64).to_le_bytes());
            write_by(&mut s, &head, deadline)?;
            send_frame(&mut s, JOIN, &hello, deadline)?;
            recv_frame(&mut s, JOIN, deadline)
        })()
        .map_err(|e| io_error("rank 0", e, timeout))?;
        let hellos = get_list(&hellos)?;
        if hellos.len() != ranks {
            return Err(group_error("rank 0 answered for another group".into()));
        }
        Ok((vec![s], hellos))
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The all-to-all of the ranks: `parts[r]` goes to rank `r`; the result holds what each
    /// rank sent this one, in rank order. Every rank must call it (collective).
    ///
    /// # Errors
    ///
    /// `Error::Group` where a rank left, did not answer within the timeout, or called another
    /// collective; every later call then fails too.
    pub fn exchange(&self, what: &str, parts: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>> {
        if parts.len() != self.ranks {
            return Err(Error::Internal("an exchange of the wrong shape".into()));
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = &state.broken {
            return Err(e.clone());
        }
        if self.ranks == 1 {
            return Ok(parts);
        }
        state.seq += 1;
        let tag = Tag {
            seq: state.seq,
            what,
        };
        let deadline = Instant::now() + self.timeout;
        let got = if self.rank == 0 {
            self.relay(&mut state.links, tag, parts, deadline)
        } else {
            let s = &mut state.links[0];
            send_frame(s, tag, &put_list(&parts), deadline)
                .and_then(|()| recv_frame(s, tag, deadline))
                .map_err(|e| io_error("rank 0", e, self.timeout))
                .and_then(|b| get_list(&b))
                .and_then(|got| {
                    if got.len() == self.ranks {
                        Ok(got)
                    } else {
                        Err(group_error("a malformed message from rank 0".into()))
                    }
                })
        };
        if let Err(e) = &got {
            state.broken = Some(e.clone());
            for s in &state.links {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        got
    }

    /// Rank 0's side of an exchange: every rank's parts, then each rank's share.
    fn relay(
        &self,
        links: &mut [TcpStream],
        tag: Tag<'_>,
        own: Vec<Vec<u8>>,
        deadline: Instant,
    ) -> Result<Vec<Vec<u8>>> {
        let mut rows = Vec::with_capacity(self.ranks);
        rows.push(own);
        for (i, s) in links.iter_mut().enumerate() {
            let peer = format!("rank {}", i + 1);
            let body =
                recv_frame(s, tag, deadline).map_err(|e| io_error(&peer, e, self.timeout))?;
            let row = get_list(&body)?;
            if row.len() != self.ranks {
                return Err(group_error(format!("a malformed message from {peer}")));
            }
            rows.push(row);
        }
        let mut columns: Vec<Vec<Vec<u8>>> = (0..self.ranks).map(|_| Vec::new()).collect();
        for row in rows {
            for (d, part) in row.into_iter().enumerate() {
                columns[d].push(part);
            }
        }
        let mut columns = columns.into_iter();
        let mine = columns.next().unwrap_or_default();
        for (i, (s, col)) in links.iter_mut().zip(columns).enumerate() {
            send_frame(s, tag, &put_list(&col), deadline)
                .map_err(|e| io_error(&format!("rank {}", i + 1), e, self.timeout))?;
        }
        Ok(mine)
    }

    /// Breaks the wire with `e` (this rank's part of a collective failed): its connections
    /// close, so that the other ranks' collectives fail at once, and every later collective
    /// here fails with `e`.
    pub fn fail(&self, e: Error) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.broken.is_none() {
            state.broken = Some(e);
        }
        for s in &state.links {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Every rank's `mine`, in rank order (collective).
    pub fn all_gather(&self, what: &str, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        self.exchange(what, vec![mine; self.ranks])
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        for s in &state.links {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}
