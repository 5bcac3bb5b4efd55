function test_large_window_compact()
%TEST_LARGE_WINDOW_COMPACT  Windows of more than 255 cells store their compact index as int16; 'global' max
% pooling gives the linear index of each plane's maximum (max over the plane, computed here with Octave's max).
randn('seed', 4);
X = randn(20, 15, 3, 2);
[Y, I] = poolkit.maxpool(X, 'global', 'DataFormat', 'SSCB');
[m, k] = max(reshape(X, 300, 6), [], 1);
check_close(Y, reshape(m, 1, 1, 3, 2), 0, 'global Y');
check(isequal(I(:)', k + (0:5) * 300), 'global indx %s', mat2str(I(:)'));
[~, Ic, info] = poolkit.maxpool(X, 'global', 'DataFormat', 'SSCB', 'Indices', 'compact');
check(isa(Ic, 'int16') && isequal(double(Ic(:)'), k - 1), 'compact class %s', class(Ic));
check(isequal(poolkit.maxpool_backward(Y, Ic, info), poolkit.maxpool_backward(Y, I, size(X))), 'backward int16');
end
