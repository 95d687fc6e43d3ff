! solve.f90 -- the numrpc Fortran module end to end: solves A x = b remotely
! (dgesv, dgefa/dgesl, linpack, dgetrf/dgetrs, zgesv), checks the residuals,
! and checks that wrongly typed, shaped or counted arguments give clear errors.
! Prints PASS/FAIL lines; exits 1 if anything failed.  `solve nostatus` calls
! an unknown routine without status=, `solve positional` passes the status as
! a routine argument: the library must stop the program with the reason.
program solve
  use numrpc
  implicit none
  integer, parameter :: n = 60, lda = n + 5, nrhs = 2
  double precision :: a0(lda, n), a(lda, n), b0(n, nrhs), b(n, nrhs), x(n)
  complex(8) :: za0(lda, n), za(lda, n), zb0(n, 1), zb(n, 1)
  real :: a4(lda, n)
  double precision :: wr(n), wi(n), vr(n, n), work(8 * n)
  double precision, allocatable :: vl(:, :)
  integer :: ipiv(n), info, status, i, j, nfail = 0, npass = 0
  integer(8) :: n8
  character(len=64) :: mode, server

  call get_command_argument(1, mode)
  if (mode == 'nostatus') then
     call numrpc_call('no_such_routine', n)
     write (*, '(a)') 'numrpc_call returned after a failure without status='
     stop 0
  else if (mode == 'positional') then
     a = 0
     b = 0
     call numrpc_call('dgesv', n, nrhs, a, lda, ipiv, b, n, info, status)
     write (*, '(a)') 'numrpc_call returned after a failure without status='
     stop 0
  end if
  call get_environment_variable('NUMRPC_SERVER', server)

  ! A well-conditioned matrix; rows n+1..lda are padding that must not change.
  do j = 1, n
     do i = 1, lda
        a0(i, j) = sin(dble(i * 7 + j * 3)) + merge(dble(n), 0d0, i == j)
        if (i > n) a0(i, j) = 777d0
        za0(i, j) = cmplx(a0(i, j), cos(dble(i + 2 * j)), kind=8)
     end do
  end do
  do j = 1, nrhs
     do i = 1, n
        b0(i, j) = dble(i - j) / 7d0
     end do
  end do
  zb0(:, 1) = cmplx(b0(:, 1), 1d0, kind=8)

  ! dgesv, the function form, lda > n
  a = a0
  b = b0
  info = -1
  status = numrpc_fcall('dgesv', n, nrhs, a, lda, ipiv, b, n, info)
  call check('dgesv status', status == NUMRPC_OK)
  call check('dgesv info', info == 0)
  call check('dgesv error detail empty after success', numrpc_error_detail() == '')
  do j = 1, nrhs
     call check('dgesv residual', residual(b0(:, j), b(:, j)) < 1d-12)
  end do
  call check('dgesv padding rows untouched', all(a(n + 1:, :) == 777d0))

  ! dgefa + dgesl, the subroutine form with status=
  a = a0
  x = b0(:, 1)
  call numrpc_call('dgefa', a, lda, n, ipiv, info, status=status)
  call check('dgefa status', status == NUMRPC_OK .and. info == 0)
  call numrpc_call('dgesl', a, lda, n, ipiv, x, 0, status=status)
  call check('dgesl status', status == NUMRPC_OK)
  call check('dgefa/dgesl residual', residual(b0(:, 1), x) < 1d-12)

  ! the Ninf linpack routine, named by URL; no status=: success returns
  x = b0(:, 1)
  call numrpc_call('numrpc://' // trim(server) // '/linpack', a0, lda, n, ipiv, x, info)
  call check('linpack by URL residual', info == 0 .and. residual(b0(:, 1), x) < 1d-12)

  ! dgetrf + dgetrs with character arguments: 'N' solves A x = b, 'T' A^T x = b
  a = a0
  status = numrpc_fcall('dgetrf', n, n, a, lda, ipiv, info)
  call check('dgetrf status', status == NUMRPC_OK .and. info == 0)
  x = b0(:, 1)
  status = numrpc_fcall('dgetrs', 'N', n, 1, a, lda, ipiv, x, n, info)
  call check('dgetrs N residual', status == NUMRPC_OK .and. residual(b0(:, 1), x) < 1d-12)
  x = b0(:, 1)
  status = numrpc_fcall('dgetrs', 'T', n, 1, a, lda, ipiv, x, n, info)
  call check('dgetrs T residual', status == NUMRPC_OK .and. &
       maxval(abs(matmul(transpose(a0(1:n, :)), x) - b0(:, 1))) < 1d-12 * n * n)

  ! zgesv: complex(8) arrays
  za = za0
  zb = zb0
  status = numrpc_fcall('zgesv', n, 1, za, lda, ipiv, zb, n, info)
  call check('zgesv residual', status == NUMRPC_OK .and. info == 0 .and. &
       maxval(abs(matmul(za0(1:n, :), zb(:, 1)) - zb0(:, 1))) < 1d-12 * n * n)

  ! dgeev: jobvl 'N' leaves vl out (extent 0), so an unallocated allocatable,
  ! which Fortran passes as absent, will do; with 'V' it is an error.
  a = a0
  status = numrpc_fcall('dgeev', 'N', 'V', n, a, lda, wr, wi, vl, n, vr, n, work, size(work), info)
  call check('dgeev with vl left out', status == NUMRPC_OK .and. info == 0 .and. &
       abs(sum(wr) - trace(a0)) < 1d-9 * n * n .and. abs(sum(wi)) < 1d-9 * n)
  status = numrpc_fcall('dgeev', 'V', 'V', n, a, lda, wr, wi, vl, n, vr, n, work, size(work), info)
  call expect('unallocated vl needed', status, NUMRPC_EINVAL, &
       'argument 8 (vl) is missing or not allocated; it needs 3600 elements')

  ! Errors: checked against the interface before anything is sent.
  a4 = real(a0)
  b = b0
  status = numrpc_fcall('dgesv', n, nrhs, a4, lda, ipiv, b, n, info)
  call expect('real(4) matrix for double a', status, NUMRPC_EINVAL, 'argument 3 (a) must be real(8)')
  call check('b unchanged after a rejected call', all(b == b0))
  n8 = n
  status = numrpc_fcall('dgesv', n8, nrhs, a, lda, ipiv, b, n, info)
  call expect('integer(8) for int n', status, NUMRPC_EINVAL, 'integer(8) was given')
  status = numrpc_fcall('dgesv', ipiv, nrhs, a, lda, ipiv, b, n, info)
  call expect('array for scalar n', status, NUMRPC_EINVAL, 'is a scalar; an array of rank 1')
  status = numrpc_fcall('dgesv', n, nrhs, a, lda, ipiv, b(:, 1:1), n, info)
  call expect('b too small', status, NUMRPC_EINVAL, 'argument 6 (b) needs 120 elements')
  status = numrpc_fcall('dgesv', n, nrhs, a(1, 1), lda, ipiv, b, n, info)
  call expect('element for whole a', status, NUMRPC_EINVAL, 'a scalar or array element holds 1')
  status = numrpc_fcall('dgesv', n, 1, a(:, 1:n:2), lda, ipiv, b, n, info)
  call expect('strided section', status, NUMRPC_EINVAL, 'strided array section')
  status = numrpc_fcall('dgesv', n, nrhs, a, lda, ipiv, b, n)
  call expect('too few arguments', status, NUMRPC_EINVAL, 'dgesv takes 8 arguments')
  status = numrpc_fcall('dgesv', n, nrhs, a, lda, ipiv, b, n, 1.5)
  call expect('real for int info', status, NUMRPC_EINVAL, 'argument 8 (info) must be integer(4)')
  status = numrpc_fcall('dgetrs', 1, n, 1, a, lda, ipiv, x, n, info)
  call expect('integer for char trans', status, NUMRPC_EINVAL, 'must be character')
  status = numrpc_fcall('dgesv', n, nrhs, a, lda, ipiv, b, n, info, 1)
  call expect('too many arguments', status, NUMRPC_EINVAL, 'dgesv takes 8 arguments')
  status = numrpc_fcall('no_such_routine', n)
  call expect('unknown routine', status, NUMRPC_ENOENT, 'no_such_routine')
  call check('strerror', numrpc_strerror(NUMRPC_EINVAL) == 'invalid argument')

  call ftest()

  write (*, '(a, i0, a, i0, a)') 'solve: ', npass, ' passed, ', nfail, ' failed'
  if (nfail > 0) error stop 1

contains

  ! max |A0 x - b| relative to |A0| |x|, over the n x n part of a0.
  double precision function residual(rhs, sol)
    double precision, intent(in) :: rhs(:), sol(:)
    residual = maxval(abs(matmul(a0(1:n, :), sol) - rhs)) / &
         (maxval(abs(a0(1:n, :))) * max(maxval(abs(sol)), 1d0) * n)
  end function residual

  double precision function trace(m)
    double precision, intent(in) :: m(:, :)
    integer :: k
    trace = 0
    do k = 1, n
       trace = trace + m(k, k)
    end do
  end function trace

  subroutine check(what, ok)
    character(len=*), intent(in) :: what
    logical, intent(in) :: ok
    if (ok) then
       npass = npass + 1
       write (*, '(2a)') 'PASS ', what
    else
       nfail = nfail + 1
       write (*, '(4a)') 'FAIL ', what, ': ', numrpc_error_detail()
    end if
  end subroutine check

  ! A call that must fail with status `want` and a detail containing `words`.
  subroutine expect(what, got, want, words)
    character(len=*), intent(in) :: what, words
    integer, intent(in) :: got, want
    character(len=:), allocatable :: detail
    detail = numrpc_error_detail()
    if (got == want .and. index(detail, words) > 0) then
       npass = npass + 1
       write (*, '(4a)') 'PASS ', what, ' -> ', detail
    else
       nfail = nfail + 1
       write (*, '(2a, i0, 4a)') 'FAIL ', what, ': status ', got, ' ', numrpc_strerror(got), &
            ': ', detail
    end if
  end subroutine expect

  ! Strings, char, long, float and complex scalars and a char array, through
  ! the test module ftest (served only when the driver built it).
  subroutine ftest()
    character(len=64) :: out
    character(len=10) :: padded = 'trimmed'
    integer(8) :: lout
    double precision :: total
    real :: v(3) = [1.0, 2.5, -4.0]
    status = numrpc_fcall('fecho', padded, 'Q', 21_8, 1.5, (2d0, 0.25d0), out, lout, total, v, 3)
    if (status == NUMRPC_ENOENT) return
    call check('fecho status', status == NUMRPC_OK)
    call check('fecho string and char', out == 'trimmed|Q')
    call check('fecho long', lout == 42_8)
    call check('fecho float and complex', abs(total - 3.75d0) < 1d-12)
    call check('fecho float array', all(v == [2.0, 5.0, -8.0]))
    status = numrpc_fcall('fecho', 'x', 'Q', 21, 1.5, (2d0, 0.25d0), out, lout, total, v, 3)
    call expect('integer(4) for long', status, NUMRPC_EINVAL, 'must be integer(8)')
    status = numrpc_fcall('fecho', 'x', 'Q', 21_8, 1.5d0, (2d0, 0.25d0), out, lout, total, v, 3)
    call expect('double for float', status, NUMRPC_EINVAL, 'must be real(4)')
    status = numrpc_fcall('fecho', 'x', 'Q', 21_8, 1.5, (2.0, 0.25), out, lout, total, v, 3)
    call expect('complex(4) for double complex', status, NUMRPC_EINVAL, 'must be complex(8)')
    status = numrpc_fcall('fecho', 'x', 'Q', 21_8, 1.5, (2d0, 0.25d0), out(1:10), lout, total, v, 3)
    call expect('char array too short', status, NUMRPC_EINVAL, 'argument 6 (text) needs 64')
    ! Out and inout character results: blank-padded or cut, as Fortran assigns.
    block
      character(len=30) :: loud
      character(len=8) :: short
      character(len=12) :: word
      loud = 'old text'
      word = 'remote'
      status = numrpc_fcall('fshout', 'numrpc in fortran', loud, word)
      call check('fshout status', status == NUMRPC_OK)
      call check('fshout out string', loud == 'NUMRPC IN FORTRAN')
      call check('fshout inout string', word == 'etomer')
      status = numrpc_fcall('fshout', 'numrpc in fortran', short, word)
      call check('fshout out string cut to its variable', short == 'NUMRPC I')
      call check('fshout inout string back again', word == 'remote')
    end block
  end subroutine ftest

end program solve
