//! `nowa ssdiq`.
