import os, ctypes, errno
libc=ctypes.CDLL(None,use_errno=True)
def t(name,f):
    try:
        r=f(); print(name,"OK",r)
    except Exception as e: print(name,"ERR",e)
os.makedirs("d1",exist_ok=True)
open("d1/x","w").write("#!/bin/sh\n")
# rename file into hooks
t("rename->.git/hooks/pre-commit", lambda: os.rename("d1/x",".git/hooks/pre-commit"))
# renameat2 RENAME_EXCHANGE / NOREPLACE
AT=-100
def ra2(a,b,fl):
    r=libc.syscall(316,AT,a.encode(),AT,b.encode(),fl)
    if r<0: raise OSError(ctypes.get_errno(),os.strerror(ctypes.get_errno()))
    return r
t("renameat2 noreplace ->.envrc", lambda: ra2("d1/x",".envrc",1))
open("d1/y","w").write("x")
t("link ->.envrc", lambda: os.link("d1/y",".envrc"))
t("symlink .envrc", lambda: os.symlink("d1/y",".envrc"))
t("mknod .envrc", lambda: os.mknod(".envrc",0o100644))
t("mkdir .vscode", lambda: os.mkdir(".vscode"))
t("mkdir ./.VSCODE", lambda: os.mkdir(".VSCODE"))
# dir rename trick: create d2/.vscode? nested protected at any depth? 
t("mkdir d1/.vscode", lambda: os.mkdir("d1/.vscode"))
os.makedirs("d3/inner",exist_ok=True)
t("rename dir d3 -> .vscode", lambda: os.rename("d3",".vscode"))
t("rename dir d3 -> .direnv", lambda: os.rename("d3",".direnv"))
# O_TMPFILE + linkat
def tmpl():
    fd=os.open(".",os.O_TMPFILE|os.O_WRONLY,0o755); os.write(fd,b"x")
    r=libc.linkat(fd,b"",AT,b".envrc",0x1000)
    if r<0: raise OSError(ctypes.get_errno(),"linkat empty_path")
    return r
t("O_TMPFILE linkat AT_EMPTY_PATH .envrc", tmpl)
def tmpl2():
    fd=os.open(".",os.O_TMPFILE|os.O_WRONLY,0o755)
    return os.link("/proc/self/fd/%d"%fd,".bashrc")
t("O_TMPFILE link /proc/self/fd .bashrc", tmpl2)
# chdir into dir, rename parent
os.makedirs("p/q",exist_ok=True)
def cdr():
    os.chdir("p/q"); os.rename("../../p","../../.vscode"); os.chdir("/"+os.environ["WS"].lstrip("/"))
t("rename parent while cwd inside to .vscode", cdr)
os.chdir(os.environ["WS"])
t("trailing slash mkdir .vscode/", lambda: os.mkdir(".vscode/"))
t("double slash .git//hooks/x", lambda: open(".git//hooks/x","w"))
t("/proc/self/root path .envrc", lambda: open("/proc/self/root"+os.environ["WS"]+"/.envrc","w"))
t("/proc/thread-self/cwd .envrc", lambda: open("/proc/thread-self/cwd/.envrc","w"))
t("/proc/1/cwd .envrc", lambda: open("/proc/%d/cwd/.envrc"%os.getppid(),"w"))
print(sorted(os.listdir(".")))
