! progress.f90 -- a Fortran progress handler (numrpc_set_progress with a
! bind(C) subroutine) sees the frames of a dgemm of order 2000, which is
! checked against a plain product of a few entries.  PASS/FAIL lines.
module frames
  use, intrinsic :: iso_c_binding, only: c_ptr, c_double
  use numrpc
  implicit none
  integer :: count = 0, bad = 0
  real(c_double) :: last = -1
  character(len=16) :: routine = ''
contains
  subroutine on_frame(p, arg) bind(C)
    type(numrpc_progress), intent(in) :: p
    type(c_ptr), value :: arg
    count = count + 1
    if (p%call_id /= 0 .or. .not. (p%elapsed > last)) bad = bad + 1
    last = p%elapsed
    routine = numrpc_progress_text(p%routine)
  end subroutine on_frame
end module frames

program progress
  use, intrinsic :: iso_c_binding, only: c_funloc, c_null_ptr, c_null_funptr, c_double
  use numrpc
  use frames
  implicit none
  integer, parameter :: n = 2000
  double precision, allocatable :: a(:, :), b(:, :), c(:, :)
  integer :: i, j, status, nfail = 0
  allocate(a(n, n), b(n, n), c(n, n))
  do j = 1, n
     do i = 1, n
        a(i, j) = dble(mod(i + j, 7)) - 3
        b(i, j) = dble(mod(i * j, 5)) - 2
     end do
  end do
  call numrpc_set_progress(c_funloc(on_frame), c_null_ptr, 0.05_c_double)
  call numrpc_call('dgemm', 'N', 'N', n, n, n, 1d0, a, n, b, n, 0d0, c, n, status=status)
  call numrpc_set_progress(c_null_funptr, c_null_ptr, 0d0)
  call check(status == NUMRPC_OK, 'dgemm with a Fortran progress handler')
  call check(abs(c(1, 1) - dot_product(a(1, :), b(:, 1))) < 1d-9 .and. &
       abs(c(n, 7) - dot_product(a(n, :), b(:, 7))) < 1d-9, 'the product is right')
  call check(count > 0 .and. bad == 0 .and. routine == 'dgemm', 'the handler saw growing frames of dgemm')
  print '(a, i0, a)', 'progress: ', count, ' frames'
  deallocate(a, b, c) ! the main program's arrays are on its stack: LeakSanitizer counts them
  if (nfail > 0) stop 1
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
       print '(a)', 'PASS ' // what
    else
       print '(a)', 'FAIL ' // what
       nfail = nfail + 1
    end if
  end subroutine check
end program progress
