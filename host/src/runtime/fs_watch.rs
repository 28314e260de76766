//! WASI's filesystem calls that take a path, watched for what the sandbox
//! refuses (see `denials`): each refuses a path outside every grant (one
//! that resolved to the root preopen) before it runs, and records a refusal
//! it meets (a write into a read-only grant, a path leading out of its
//! grant). `get-directories` tells the watch which preopen is which.
//! `open-at` is watched in `instance`, beside its descriptor budget, through
//! [`FsWatch::open_at`].

use std::future::Future;
use std::pin::Pin;

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::FsPerms;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::FsResult;
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorFlags, ErrorCode, HostDescriptor, NewTimestamp, OpenFlags, PathFlags,
};

use super::denials::{Access, Denials};
use super::instance::WASI_FILESYSTEM_TYPES;

/// How wasmtime-wasi names the preopens interface it links.
const WASI_FILESYSTEM_PREOPENS: &str = "wasi:filesystem/preopens@0.2.12";

/// WASI's filesystem state and the record of what the sandbox refused.
pub(crate) struct FsWatch<'a> {
    /// WASI's own filesystem state.
    pub fs: WasiFilesystemCtxView<'a>,
    /// What the call in progress was refused.
    pub denials: &'a mut Denials,
}

/// A filesystem call of wasmtime-wasi, on a view of its own.
type Call<'v, R> = Pin<Box<dyn Future<Output = FsResult<R>> + Send + 'v>>;

impl FsWatch<'_> {
    /// Runs `call`, an `access` to `path` under the directory `dir`, unless
    /// the path is outside every grant; records what the sandbox refused.
    pub(crate) async fn run<R, F>(
        &mut self,
        dir: Resource<Descriptor>,
        path: String,
        access: Access,
        call: F,
    ) -> wasmtime::Result<Result<R, ErrorCode>>
    where
        F: for<'v> FnOnce(WasiFilesystemCtxView<'v>, Resource<Descriptor>, String) -> Call<'v, R> + Send,
    {
        let under = dir.rep();
        if let Some(refused) = self.denials.refuse_outside(under, &path, access) {
            return Ok(Err(refused));
        }
        let writable = self.writable(&dir);
        let result = self.call(|fs| call(fs, dir, path.clone())).await?;
        self.denials.after(under, &path, access, writable, result.as_ref().err().copied());
        Ok(result)
    }

    /// wasmtime-wasi's `open-at`, watched; the directories it opens are
    /// remembered by the path the provider reaches them by.
    pub(crate) async fn open_at(
        &mut self,
        dir: Resource<Descriptor>,
        path_flags: PathFlags,
        path: String,
        open_flags: OpenFlags,
        flags: DescriptorFlags,
    ) -> wasmtime::Result<Result<Resource<Descriptor>, ErrorCode>> {
        let under = dir.rep();
        let access = if open_flags.intersects(OpenFlags::CREATE | OpenFlags::TRUNCATE)
            || flags.contains(DescriptorFlags::WRITE)
        {
            Access::Write
        } else if open_flags.contains(OpenFlags::DIRECTORY) {
            Access::List
        } else {
            Access::Read
        };
        let name = path.clone();
        let opened = self
            .run(dir, path, access, |mut fs, dir, path| {
                Box::pin(
                    async move { HostDescriptor::open_at(&mut fs, dir, path_flags, path, open_flags, flags).await },
                )
            })
            .await?;
        if let Ok(descriptor) = &opened {
            let is_dir = matches!(self.fs.table.get(descriptor), Ok(Descriptor::Dir(_)));
            self.denials.opened(descriptor.rep(), under, &name, is_dir);
        }
        Ok(opened)
    }

    /// Whether the directory `dir` may be written to.
    fn writable(&mut self, dir: &Resource<Descriptor>) -> bool {
        matches!(self.fs.table.get(dir), Ok(Descriptor::Dir(d)) if d.perms == FsPerms::ReadWrite)
    }

    /// Runs `call` on this view; its error as WASI's error code.
    async fn call<R, F>(&mut self, call: F) -> wasmtime::Result<Result<R, ErrorCode>>
    where
        F: for<'v> FnOnce(WasiFilesystemCtxView<'v>) -> Call<'v, R>,
    {
        let fs = WasiFilesystemCtxView { ctx: &mut *self.fs.ctx, table: &mut *self.fs.table };
        match call(fs).await {
            Ok(answer) => Ok(Ok(answer)),
            Err(e) => Ok(Err(e.downcast()?)),
        }
    }
}

/// Replaces in `linker` (which must already have WASI's filesystem)
/// `get-directories` and every `descriptor` method that takes a path, but
/// `open-at`, by watched ones; `view` finds their state.
pub(crate) fn watch_filesystem<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> FsWatch<'_>,
) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    linker.instance(WASI_FILESYSTEM_PREOPENS)?.func_wrap(
        "get-directories",
        move |mut store: StoreContextMut<'_, T>, (): ()| {
            let watch = view(store.data_mut());
            let mut fs = watch.fs;
            let dirs = preopens::Host::get_directories(&mut fs)?;
            for (dir, name) in &dirs {
                watch.denials.preopened(dir.rep(), name);
            }
            Ok((dirs,))
        },
    )?;
    watch_path_calls(linker, view)?;
    watch_two_path_calls(linker, view)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// The result of a watched call, as a host function returns it.
type Answer<R> = wasmtime::Result<(Result<R, ErrorCode>,)>;

/// The methods on one directory and one path.
fn watch_path_calls<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> FsWatch<'_>,
) -> wasmtime::Result<()> {
    type Dir = Resource<Descriptor>;
    let mut types = linker.instance(WASI_FILESYSTEM_TYPES)?;
    types.func_wrap_async(
        "[method]descriptor.create-directory-at",
        move |mut store: StoreContextMut<'_, T>, (dir, path): (Dir, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::CreateDir, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::create_directory_at(&mut fs, dir, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.stat-at",
        move |mut store: StoreContextMut<'_, T>, (dir, flags, path): (Dir, PathFlags, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Read, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::stat_at(&mut fs, dir, flags, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.set-times-at",
        move |mut store: StoreContextMut<'_, T>,
              (dir, flags, path, atime, mtime): (Dir, PathFlags, String, NewTimestamp, NewTimestamp)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Write, |mut fs, dir, path| {
                        Box::pin(
                            async move { HostDescriptor::set_times_at(&mut fs, dir, flags, path, atime, mtime).await },
                        )
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.readlink-at",
        move |mut store: StoreContextMut<'_, T>, (dir, path): (Dir, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Read, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::readlink_at(&mut fs, dir, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.remove-directory-at",
        move |mut store: StoreContextMut<'_, T>, (dir, path): (Dir, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Write, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::remove_directory_at(&mut fs, dir, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.symlink-at",
        move |mut store: StoreContextMut<'_, T>, (dir, target, path): (Dir, String, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Write, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::symlink_at(&mut fs, dir, target, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.unlink-file-at",
        move |mut store: StoreContextMut<'_, T>, (dir, path): (Dir, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Write, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::unlink_file_at(&mut fs, dir, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.metadata-hash-at",
        move |mut store: StoreContextMut<'_, T>, (dir, flags, path): (Dir, PathFlags, String)| {
            Box::new(async move {
                let result = view(store.data_mut())
                    .run(dir, path, Access::Read, |mut fs, dir, path| {
                        Box::pin(async move { HostDescriptor::metadata_hash_at(&mut fs, dir, flags, path).await })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    Ok(())
}

/// `rename-at` and `link-at`: a path under one directory to a path under
/// another. The new path is the one run and recorded; the old one is only
/// refused when it is outside every grant.
fn watch_two_path_calls<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> FsWatch<'_>,
) -> wasmtime::Result<()> {
    type Dir = Resource<Descriptor>;
    let mut types = linker.instance(WASI_FILESYSTEM_TYPES)?;
    types.func_wrap_async(
        "[method]descriptor.rename-at",
        move |mut store: StoreContextMut<'_, T>, (old_dir, old_path, new_dir, new_path): (Dir, String, Dir, String)| {
            Box::new(async move {
                let mut watch = view(store.data_mut());
                if let Some(refused) = watch.denials.refuse_outside(old_dir.rep(), &old_path, Access::Write) {
                    return Ok((Err(refused),));
                }
                let result = watch
                    .run(new_dir, new_path, Access::Write, |mut fs, new_dir, new_path| {
                        Box::pin(async move {
                            HostDescriptor::rename_at(&mut fs, old_dir, old_path, new_dir, new_path).await
                        })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]descriptor.link-at",
        move |mut store: StoreContextMut<'_, T>,
              (old_dir, flags, old_path, new_dir, new_path): (Dir, PathFlags, String, Dir, String)| {
            Box::new(async move {
                let mut watch = view(store.data_mut());
                if let Some(refused) = watch.denials.refuse_outside(old_dir.rep(), &old_path, Access::Read) {
                    return Ok((Err(refused),));
                }
                let result = watch
                    .run(new_dir, new_path, Access::Write, |mut fs, new_dir, new_path| {
                        Box::pin(async move {
                            HostDescriptor::link_at(&mut fs, old_dir, flags, old_path, new_dir, new_path).await
                        })
                    })
                    .await;
                answer(result)
            })
        },
    )?;
    Ok(())
}

/// A watched call's result as a host function returns it.
fn answer<R>(result: wasmtime::Result<Result<R, ErrorCode>>) -> Answer<R> {
    result.map(|r| (r,))
}
