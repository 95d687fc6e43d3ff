! async.f90 -- the numrpc module's asynchronous family end to end: solves
! started with numrpc_call_async, returned by numrpc_wait, _wait_any and
! _wait_all, each against the local LAPACK; numrpc_probe, numrpc_cancel and
! the errors.  Prints PASS/FAIL lines; exits 1 if anything failed.
program async
  use numrpc
  implicit none
  integer, parameter :: n = 40, k = 4
  double precision, asynchronous :: a(n, n, k), b(n, k)
  double precision :: a0(n, n, k), b0(n, k), x(n, k)
  real :: a4(n, n)
  integer, asynchronous :: ipiv(n, k), info(k)
  integer :: ipiv0(n), info0, ids(k), id, got, status, i, j, c, seen(k), nfail = 0, npass = 0
  integer(8) :: t0, t1, rate

  do c = 1, k
     do j = 1, n
        do i = 1, n
           a0(i, j, c) = sin(dble(i * 3 + j * 5 + c)) + merge(dble(n), 0d0, i == j)
        end do
        b0(j, c) = cos(dble(j + 7 * c))
     end do
  end do

  ! numrpc_wait: k solves in flight at once, each returned by its id.
  a = a0
  b = b0
  do c = 1, k
     call numrpc_call_async(ids(c), 'dgesv', n, 1, a(:, :, c), n, ipiv(:, c), b(:, c), n, info(c), status=status)
     call check(status == NUMRPC_OK .and. ids(c) > 0, 'numrpc_call_async starts dgesv')
  end do
  do c = 1, k
     call numrpc_wait(ids(c), status=status)
     call check(status == NUMRPC_OK .and. info(c) == 0, 'numrpc_wait returns each call')
  end do
  call check(all_solved(), 'the remote solutions equal the local LAPACK ones')

  ! numrpc_wait_any: each call exactly once.
  a = a0
  b = b0
  do c = 1, k
     call numrpc_call_async(ids(c), 'dgesv', n, 1, a(:, :, c), n, ipiv(:, c), b(:, c), n, info(c), status=status)
  end do
  seen = 0
  do c = 1, k
     call numrpc_wait_any(got, status=status)
     do j = 1, k
        if (ids(j) == got) seen(j) = seen(j) + 1
     end do
  end do
  call check(all(seen == 1) .and. all_solved(), 'numrpc_wait_any returns each call once, each right')
  call numrpc_wait_any(got, status=status)
  call check(status == NUMRPC_EINVAL .and. got == 0, 'numrpc_wait_any with nothing left: NUMRPC_EINVAL')

  ! numrpc_wait_all and numrpc_probe.
  a = a0
  b = b0
  do c = 1, k
     call numrpc_call_async(ids(c), 'dgesv', n, 1, a(:, :, c), n, ipiv(:, c), b(:, c), n, info(c))
  end do
  call numrpc_wait_all(status=status)
  call check(status == NUMRPC_OK .and. all_solved(), 'numrpc_wait_all returns every call, each right')
  call numrpc_call_async(id, 'dgesv', n, 1, a(:, :, 1), n, ipiv(:, 1), b(:, 1), n, info(1))
  call system_clock(t0, rate)
  do ! probing, at most 30 s (a bound that only stops a hang)
     if (numrpc_probe(id) /= 0) exit
     call system_clock(t1)
     if (t1 - t0 > 30 * rate) exit
  end do
  call check(numrpc_probe(id) == 1, 'numrpc_probe says the call is complete')
  call numrpc_cancel(id, status=status) ! complete already: nothing changes
  call numrpc_wait(id, status=status)
  call check(status == NUMRPC_OK, 'a complete call cancelled is still its own result')
  call numrpc_wait(id, status=status)
  call check(status == NUMRPC_EINVAL, 'a call is returned once: a second wait is NUMRPC_EINVAL')

  ! Errors: a real matrix where a double precision one goes; no call starts.
  a4 = 1
  call numrpc_call_async(id, 'dgesv', n, 1, a4, n, ipiv(:, 1), b(:, 1), n, info(1), status=status)
  call check(status == NUMRPC_EINVAL .and. id == 0, 'a real matrix for dgesv: NUMRPC_EINVAL, no call')
  call check(index(numrpc_error_detail(), 'dgesv: argument 3 (a)') > 0, 'the detail names the argument')

  write (*, '(a, i0, a, i0, a)') 'async: ', npass, ' passed, ', nfail, ' failed'
  if (nfail > 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
       npass = npass + 1
       write (*, '(2a)') 'PASS ', what
    else
       nfail = nfail + 1
       write (*, '(4a)') 'FAIL ', what, ': ', numrpc_error_detail()
    end if
  end subroutine check

  ! Each b(:, c) against the local dgesv of the same system.
  logical function all_solved()
    double precision :: la(n, n), lb(n)
    all_solved = .true.
    do c = 1, k
       la = a0(:, :, c)
       lb = b0(:, c)
       call dgesv(n, 1, la, n, ipiv0, lb, n, info0)
       x(:, c) = lb
       if (info0 /= 0 .or. maxval(abs(b(:, c) - x(:, c))) > 1d-10 * maxval(abs(x(:, c)))) all_solved = .false.
    end do
  end function all_solved
end program async
