! handles.f90 -- type(numrpc_data) handles from Fortran: the matrix put once,
! dgefa then dgesl on the server's copy, a dgemm into an empty handle, each
! compared with local LAPACK/BLAS; then the errors (freed handle, wrong type,
! too small an array).  Prints PASS/FAIL lines; exits 1 if anything failed.
program handles
  use numrpc
  implicit none
  integer, parameter :: n = 40, lda = n + 3
  double precision :: a0(lda, n), af(lda, n), lu(lda, n), b0(n), x(n), xl(n)
  double precision :: bm(n, n), cm(n, n), cl(n, n), small(n, n - 1)
  real :: a4(lda, n)
  integer :: ipvt(n), ipiv(n), info, linfo, status, i, j, nfail = 0, npass = 0
  type(numrpc_data) :: h, hs, hb, hc, stale

  do j = 1, n
     do i = 1, lda
        a0(i, j) = cos(dble(3 * i + 5 * j)) + merge(dble(n), 0d0, i == j)
        if (i > n) a0(i, j) = 555d0
     end do
     b0(j) = dble(j) / 3d0 - 2d0
     bm(:, j) = sin(dble(j + [(i, i = 1, n)]))
  end do

  ! local reference: LAPACK's LU and solution
  lu = a0
  call dgetrf(n, n, lu, lda, ipiv, linfo)
  xl = b0
  call dgetrs('N', n, 1, lu, lda, ipiv, xl, n, linfo)

  ! the matrix travels once; dgefa factors it in place on the server
  call numrpc_data_put(h, a0, status=status)
  call check('put a0', status == NUMRPC_OK)
  call numrpc_call('dgefa', h, lda, n, ipvt, info, status=status)
  call check('dgefa on the handle', status == NUMRPC_OK .and. info == 0)
  x = b0
  call numrpc_call('dgesl', h, lda, n, ipvt, x, 0)
  call check('dgesl on the handle = LAPACK dgetrs', maxval(abs(x - xl)) < 1d-10 * maxval(abs(xl)))
  call check('pivots = LAPACK dgetrf', all(ipvt == ipiv))
  af = 0
  call numrpc_data_get(h, af, status=status)
  call check('get the factors', status == NUMRPC_OK)
  call check('factors: U = LAPACK dgetrf U, |L| = |LAPACK L|', factors_match(af, lu))
  call check('padding rows kept', all(af(n + 1:, :) == 555d0))
  x = b0
  status = numrpc_fcall('dgesl', h, lda, n, ipvt, x, 0)
  call check('second solve, function form', status == NUMRPC_OK .and. &
       maxval(abs(x - xl)) < 1d-10 * maxval(abs(xl)))

  ! C = A * B into an empty handle, then fetched
  call numrpc_data_put(hb, bm)
  call numrpc_data_new(hc, 0d0, n, n, status=status)
  call check('new handle', status == NUMRPC_OK)
  call numrpc_call('dgemm', 'N', 'N', n, n, n, 1d0, a0, lda, hb, n, 0d0, hc, n, status=status)
  call check('dgemm with handles', status == NUMRPC_OK)
  call numrpc_data_get(hc, cm)
  call dgemm('N', 'N', n, n, n, 1d0, a0, lda, bm, n, 0d0, cl, n)
  call check('dgemm result = local BLAS dgemm', maxval(abs(cm - cl)) < 1d-12 * maxval(abs(cl)))

  ! errors: each a status and a detail that says why
  call numrpc_data_get(h, small, status=status)
  call check('get into too small an array: EINVAL', status == NUMRPC_EINVAL .and. &
       index(numrpc_error_detail(), 'cannot take it') > 0)
  a4 = 1
  call numrpc_data_put(hs, a4)
  status = numrpc_fcall('dgefa', hs, lda, n, ipvt, info)
  call check('real(4) handle for a double array: EINVAL', status == NUMRPC_EINVAL .and. &
       index(numrpc_error_detail(), 'refused') > 0)
  call numrpc_data_free(hs)
  stale = h
  call numrpc_data_free(h, status=status)
  call check('free', status == NUMRPC_OK)
  status = numrpc_fcall('dgesl', h, lda, n, ipvt, x, 0)
  call check('a freed handle in a call: ENOHANDLE', status == NUMRPC_ENOHANDLE .and. &
       index(numrpc_error_detail(), 'no live handle') > 0)
  call numrpc_data_free(h, status=status)
  call check('freed twice: ENOHANDLE', status == NUMRPC_ENOHANDLE)
  call numrpc_data_get(stale, af, status=status)
  call check('a copy of a freed handle: ENOHANDLE', status == NUMRPC_ENOHANDLE)
  call numrpc_data_new(hs, 'x', n, n, status=status)
  call check('new with a character(len=1) mold is fine', status == NUMRPC_OK)
  call numrpc_data_free(hs)
  call numrpc_data_new(hs, .true., n, n, status=status)
  call check('new with a logical mold: EINVAL', status == NUMRPC_EINVAL)
  call numrpc_data_free(hb)
  call numrpc_data_free(hc)

  write (*, '(a, i0, a, i0, a)') 'handles.f90: ', npass, ' passed, ', nfail, ' failed'
  if (nfail > 0) error stop 1

contains

  subroutine check(what, ok)
    character(len=*), intent(in) :: what
    logical, intent(in) :: ok
    if (ok) then
       npass = npass + 1
       write (*, '(a)') 'PASS ' // what
    else
       nfail = nfail + 1
       write (*, '(a)') 'FAIL ' // what // ' [' // numrpc_error_detail() // ']'
    end if
  end subroutine check

  ! The server's dgefa stores LINPACK's negated multipliers below the diagonal.
  logical function factors_match(f, l)
    double precision, intent(in) :: f(lda, n), l(lda, n)
    double precision :: tol
    integer :: r, c
    tol = 1d-12 * maxval(abs(l(1:n, :)))
    factors_match = .true.
    do c = 1, n
       do r = 1, n
          if (r <= c) then
             factors_match = factors_match .and. abs(f(r, c) - l(r, c)) <= tol
          else
             factors_match = factors_match .and. abs(abs(f(r, c)) - abs(l(r, c))) <= tol
          end if
       end do
    end do
  end function factors_match

end program handles
