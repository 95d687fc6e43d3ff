! numrpc.f90 -- the numrpc Fortran module: call a routine on a remote numrpc
! server in one statement with its ordinary arguments (docs/fortran.md).
!
!   use numrpc
!   status = numrpc_fcall('dgesv', n, nrhs, a, lda, ipiv, b, ldb, info)
!   call numrpc_call('dgesv', n, nrhs, a, lda, ipiv, b, ldb, info, status=status)
!
! A type(numrpc_data) handle keeps an array on the server between calls and
! stands wherever the array goes (docs/handles.md):
!   call numrpc_data_put(h, a)                  ! a travels once
!   call numrpc_call('dgefa', h, lda, n, ipvt, info)
!   call numrpc_call('dgesl', h, lda, n, ipvt, b, 0)
!   call numrpc_data_free(h)
!
! Arguments come in IDL order, exactly as the library routine takes them;
! the name may be 'numrpc://host:port/dgesv'.  The dummies are optional,
! assumed-type, assumed-rank (TS 29113), so one interface takes any routine's
! arguments, and libnumrpc checks each one's type, rank and size against the
! routine's interface before anything is sent.  Requires gfortran >= 9 and
! libnumrpc built with gfortran's ISO_Fortran_binding.h.
module numrpc
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_ptr, c_size_t, &
       c_null_char, c_null_ptr, c_associated, c_f_pointer, c_loc, c_double, c_funptr
  implicit none
  private

  public :: numrpc_fcall, numrpc_call, numrpc_strerror, numrpc_error_detail, &
       numrpc_init, numrpc_finalize, numrpc_data_put, numrpc_data_new, numrpc_data_get, &
       numrpc_data_free, numrpc_call_async, numrpc_wait, numrpc_wait_any, numrpc_wait_all, &
       numrpc_cancel, numrpc_probe, numrpc_set_progress, numrpc_progress_text

  ! A data handle: an array kept on a server, owned by the library from
  ! numrpc_data_put or numrpc_data_new until numrpc_data_free (which resets
  ! it).  Pass it where the array goes in numrpc_call / numrpc_fcall.  A
  ! copy names the same handle; after a free every copy is stale.
  type, bind(C), public :: numrpc_data
     private
     type(c_ptr) :: p = c_null_ptr
  end type numrpc_data

  ! Status codes (numrpc.h's list): 0 is success, failures are negative.
  integer, parameter, public :: NUMRPC_OK = 0, NUMRPC_ENOMEM = -1, &
       NUMRPC_EINVAL = -2, NUMRPC_ENOENT = -3, NUMRPC_ECONNECT = -4, &
       NUMRPC_EPROTO = -5, NUMRPC_EVERSION = -6, NUMRPC_ESERVER = -7, &
       NUMRPC_ELIMIT = -8, NUMRPC_ECANCELLED = -9, NUMRPC_ETIMEDOUT = -10, &
       NUMRPC_ECRASHED = -11, NUMRPC_EIO = -12, NUMRPC_ESTALE = -13, &
       NUMRPC_ENOSERVER = -14, NUMRPC_EBUSY = -15, NUMRPC_EAUTH = -16, &
       NUMRPC_ESYNTAX = -17, NUMRPC_EINTERNAL = -18, &
       NUMRPC_ENOHANDLE = -20

  ! numrpc_progress of numrpc.h: what a progress handler gets.  The handler
  ! is a bind(C) subroutine h(p, arg) with type(numrpc_progress),
  ! intent(in) :: p and type(c_ptr), value :: arg, given to
  ! numrpc_set_progress(c_funloc(h), arg, period); numrpc_progress_text
  ! turns routine and message into Fortran strings.  The handler must not
  ! call numrpc (docs/client.md, "Progress").
  type, bind(C), public :: numrpc_progress
     integer(c_int) :: call_id
     type(c_ptr) :: routine
     real(c_double) :: elapsed, predicted, fraction
     type(c_ptr) :: message
  end type numrpc_progress

  ! numrpc_config of numrpc.h.
  type, bind(C) :: config_t
     type(c_ptr) :: servers = c_null_ptr
     integer(c_size_t) :: packet_size = 0
     type(c_ptr) :: token_file = c_null_ptr
     type(c_ptr) :: pin_file = c_null_ptr
     type(c_ptr) :: tls_ca = c_null_ptr
     type(c_ptr) :: tls_cert = c_null_ptr
     type(c_ptr) :: tls_key = c_null_ptr
     type(c_ptr) :: metaserver = c_null_ptr
  end type config_t

  interface
     ! Calls routine `name` with up to 24 arguments; returns NUMRPC_OK (0) or
     ! a negative status (numrpc_strerror and numrpc_error_detail say why).
     integer(c_int) function numrpc_fcall(name, a1, a2, a3, a4, a5, a6, a7, a8, a9, &
          a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24) &
          bind(C, name='numrpc_fortran_fcall')
       import :: c_int, c_char
       character(kind=c_char, len=*), intent(in) :: name
       type(*), dimension(..), optional :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
            a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24
     end function numrpc_fcall

     ! The same as a subroutine.  With status= the status is stored there;
     ! without it a failure prints the reason and stops the program, as an
     ! I/O statement without iostat= does.
     subroutine numrpc_call(name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
          a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, status) &
          bind(C, name='numrpc_fortran_call')
       import :: c_int, c_char
       character(kind=c_char, len=*), intent(in) :: name
       type(*), dimension(..), optional :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
            a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_call

     ! Asynchronous calls: numrpc_call_async starts the call and returns its
     ! id at once (0 when it could not start); the arrays stay the caller's
     ! until a wait returns the call (give them the ASYNCHRONOUS attribute, or
     ! do not touch them meanwhile).  Character outputs need numrpc_call.
     ! Each takes status= as numrpc_call does.
     subroutine numrpc_call_async(id, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
          a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, status) &
          bind(C, name='numrpc_fortran_call_async')
       import :: c_int, c_char
       integer(c_int), intent(out) :: id
       character(kind=c_char, len=*), intent(in) :: name
       type(*), dimension(..), optional :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
            a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_call_async
     ! Waits for call id; status= gets its result.
     subroutine numrpc_wait(id, status) bind(C, name='numrpc_fortran_wait')
       import :: c_int
       integer(c_int), intent(in) :: id
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_wait
     ! Waits for any call in progress: its id, its result in status=.
     subroutine numrpc_wait_any(id, status) bind(C, name='numrpc_fortran_wait_any')
       import :: c_int
       integer(c_int), intent(out) :: id
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_wait_any
     ! Waits for every call in progress; status= the first failure's.
     subroutine numrpc_wait_all(status) bind(C, name='numrpc_fortran_wait_all')
       import :: c_int
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_wait_all
     ! Stops call id (it must still be waited for).
     subroutine numrpc_cancel(id, status) bind(C, name='numrpc_fortran_cancel')
       import :: c_int
       integer(c_int), intent(in) :: id
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_cancel
     ! 1 when call id is complete, 0 while it runs, < 0 for an unknown id.
     integer(c_int) function numrpc_probe(id) bind(C, name='numrpc_fortran_probe')
       import :: c_int
       integer(c_int), intent(in) :: id
     end function numrpc_probe

     ! Handles.  Each takes status= (a keyword) as numrpc_call does: without
     ! it a failure prints the reason and stops the program.
     ! Sends array a (any rank, contiguous; its first extent is the leading
     ! dimension) to server= 'host:port', or the one the library picks.
     subroutine numrpc_data_put(h, a, server, status) bind(C, name='numrpc_fortran_data_put')
       import :: numrpc_data, c_char, c_int
       type(numrpc_data), intent(out) :: h
       type(*), dimension(..), intent(in) :: a
       character(kind=c_char, len=*), intent(in), optional :: server
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_data_put

     ! An empty (zero) rows x cols handle of mold's type (e.g. 0d0), for an
     ! out argument to fill on the server.
     subroutine numrpc_data_new(h, mold, rows, cols, server, status) &
          bind(C, name='numrpc_fortran_data_new')
       import :: numrpc_data, c_char, c_int
       type(numrpc_data), intent(out) :: h
       type(*), dimension(..), intent(in) :: mold
       integer(c_int), intent(in) :: rows, cols
       character(kind=c_char, len=*), intent(in), optional :: server
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_data_new

     ! Copies the handle's array into a (same type; a's first extent is the
     ! leading dimension, a rank-1 array takes the columns one after another).
     subroutine numrpc_data_get(h, a, status) bind(C, name='numrpc_fortran_data_get')
       import :: numrpc_data, c_int
       type(numrpc_data), intent(in) :: h
       type(*), dimension(..) :: a
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_data_get

     ! Frees the handle on its server and here; h becomes empty.
     subroutine numrpc_data_free(h, status) bind(C, name='numrpc_fortran_data_free')
       import :: numrpc_data, c_int
       type(numrpc_data), intent(inout) :: h
       integer(c_int), intent(out), optional :: status
     end subroutine numrpc_data_free

     ! Closes cached connections and forgets interfaces.
     subroutine numrpc_finalize() bind(C, name='numrpc_finalize')
     end subroutine numrpc_finalize

     type(c_ptr) function c_strerror(code) bind(C, name='numrpc_strerror')
       import :: c_ptr, c_int
       integer(c_int), value :: code
     end function c_strerror

     type(c_ptr) function c_error_detail() bind(C, name='numrpc_last_error_detail')
       import :: c_ptr
     end function c_error_detail

     integer(c_int) function c_init(config) bind(C, name='numrpc_init')
       import :: c_int, config_t
       type(config_t), intent(in) :: config
     end function c_init

     ! Frames at most every period seconds for later calls (fn = c_null_funptr
     ! or period 0: none).
     subroutine numrpc_set_progress(fn, arg, period) bind(C, name='numrpc_set_progress')
       import :: c_funptr, c_ptr, c_double
       type(c_funptr), value :: fn
       type(c_ptr), value :: arg
       real(c_double), value :: period
     end subroutine numrpc_set_progress

     integer(c_size_t) function c_strlen(s) bind(C, name='strlen')
       import :: c_size_t, c_ptr
       type(c_ptr), value :: s
     end function c_strlen
  end interface

contains

  ! A NUL-terminated C string as a Fortran string.
  function from_c(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
       s = ''
       return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
       s(i:i) = chars(i)
    end do
  end function from_c

  ! A string field of a numrpc_progress (p%routine, p%message) as text.
  function numrpc_progress_text(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    s = from_c(p)
  end function numrpc_progress_text

  ! What a status means ("cannot connect to server").
  function numrpc_strerror(status) result(msg)
    integer, intent(in) :: status
    character(len=:), allocatable :: msg
    msg = from_c(c_strerror(int(status, c_int)))
  end function numrpc_strerror

  ! The detail of this thread's last failure, in words a user can act on
  ! ("dgesv: argument 3 (a) must be real(8) ..."); '' after a success.
  function numrpc_error_detail() result(msg)
    character(len=:), allocatable :: msg
    msg = from_c(c_error_detail())
  end function numrpc_error_detail

  ! Where calls go: servers = 'host:port[,host:port...]' (instead of the
  ! NUMRPC_SERVER environment variable).  Optional, as in C.
  subroutine numrpc_init(servers, status)
    character(len=*), intent(in) :: servers
    integer, intent(out), optional :: status
    character(kind=c_char), allocatable, target :: buf(:)
    type(config_t) :: config
    integer :: i, rc
    allocate(buf(len(servers) + 1))
    do i = 1, len(servers)
       buf(i) = servers(i:i)
    end do
    buf(len(servers) + 1) = c_null_char
    config%servers = c_loc(buf)
    rc = c_init(config)
    if (present(status)) then
       status = rc
    else if (rc /= NUMRPC_OK) then
       write (0, '(a)') 'numrpc_init: ' // numrpc_strerror(rc) // ': ' // numrpc_error_detail()
       error stop 1
    end if
  end subroutine numrpc_init

end module numrpc
